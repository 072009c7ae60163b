import { backtestZoneData } from '../core/forecast/backtest.js';
import type { FallBackReason, ZoneBacktestState } from '../core/forecast/backtest-state.js';
import type { ZoneTask, ZoneTaskReply } from './zone-workers.js';

/**
 * One of the processes zone-workers.ts starts: backtests the zone-bases it is sent, one at a
 * time, on their inputs as plain data, and replies with each result (and the state it keeps)
 * whole. It ends with the process that started it (its channel closes).
 */

process.on('message', (task: ZoneTask) => {
  let reply: ZoneTaskReply;
  try {
    let kept: ZoneBacktestState | undefined;
    let fellBack: FallBackReason | null | undefined;
    const result = backtestZoneData(
      task.zone,
      task.basis,
      task.inputs,
      task.issueTimes,
      task.candidateIds,
      {
        ...(task.previous && { previous: task.previous }),
        ...(task.keep && {
          keep: (state: ZoneBacktestState) => (kept = state),
          onResumption: (reason: FallBackReason | null) => (fellBack = reason),
        }),
      },
    );
    reply = {
      type: 'done',
      id: task.id,
      result,
      ...(kept && { kept }),
      ...(fellBack !== undefined && { fellBack }),
    };
  } catch (error) {
    reply = { type: 'failed', id: task.id, message: String(error) };
  }
  process.send!(reply);
});
process.on('disconnect', () => process.exit(0));
