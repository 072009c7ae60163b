import { afterAll, beforeAll } from 'vitest';
import {
  startSimulator,
  type Simulator,
  type SimulatorOptions,
} from '../../src/simulator/index.js';
import { EUROPE_PROFILES, type EuropeProfile } from '../../src/simulator/zone-profiles.js';

/**
 * The simulator of one suite: started before its tests, closed after them. What it returns
 * stands for it from the suite's `beforeAll` on.
 */
export function simulatorDuringSuite(options: SimulatorOptions): Simulator {
  let started: Simulator | undefined;
  const sim = (): Simulator => {
    if (!started) throw new Error('the simulator starts in beforeAll');
    return started;
  };
  beforeAll(async () => {
    started = await startSimulator(options);
  });
  afterAll(() => started?.close());
  return {
    get url() {
      return sim().url;
    },
    get baseUrls() {
      return sim().baseUrls;
    },
    get port() {
      return sim().port;
    },
    close: () => sim().close(),
    setFault: (spec) => sim().setFault(spec),
    clearFaults: (source) => sim().clearFaults(source),
    setNow: (now) => sim().setNow(now),
    state: () => sim().state(),
  };
}

/** The simulated profile of a European zone. */
export function europeProfileOf(zone: string): EuropeProfile {
  const profile = EUROPE_PROFILES.find((candidate) => candidate.zone === zone);
  if (!profile) throw new Error(`no profile ${zone}`);
  return profile;
}
