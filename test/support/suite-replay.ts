import { afterAll, beforeAll, beforeEach } from 'vitest';
import {
  startReplayUpstreams,
  type ReplayFault,
  type ReplayOptions,
  type ReplayRequest,
  type ReplayUpstreams,
} from './replay-upstreams.js';

export interface SuiteReplay {
  /** The running upstreams, from the suite's `beforeAll` on. */
  readonly upstreams: ReplayUpstreams;
  /**
   * What every request gets instead of the recording while set, or what each request gets (a
   * function answering undefined leaves it to the recording); unset before each test.
   */
  fault: ReplayFault | ((request: ReplayRequest) => ReplayFault | undefined) | undefined;
}

/**
 * The replayed upstreams of one suite: started before its tests and closed after them; before
 * each test the requests they saw are forgotten and the fault is unset.
 */
export function replayDuringSuite(options: Omit<ReplayOptions, 'fault'>): SuiteReplay {
  let upstreams: ReplayUpstreams | undefined;
  const replay: SuiteReplay = {
    get upstreams() {
      if (!upstreams) throw new Error('the replayed upstreams start in beforeAll');
      return upstreams;
    },
    fault: undefined,
  };
  beforeAll(async () => {
    upstreams = await startReplayUpstreams({
      ...options,
      fault: (request) =>
        typeof replay.fault === 'function' ? replay.fault(request) : replay.fault,
    });
  });
  afterAll(() => upstreams?.close());
  beforeEach(() => {
    replay.fault = undefined;
    replay.upstreams.requests.length = 0;
  });
  return replay;
}
