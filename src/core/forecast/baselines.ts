import { HISTORY_ONLY, type ForecastModel, anchorOf, nanArray } from './forecast-model.js';
import { HOUR_SECONDS } from './series.js';

/** The baselines: persistence, the weekly profile and the climatology plus anomaly. */

/** Baseline: the newest published value, held. */
export const PERSISTENCE: ForecastModel = {
  id: 'persistence@1',
  inputsOf: HISTORY_ONLY,
  predict(zone, issue, end) {
    const out = nanArray(end - issue.visibleEnd);
    const latestSlot = zone.latestSlot(issue.visibleEnd);
    if (latestSlot >= 0 && zone.profile(issue.visibleEnd))
      out.fill(zone.series.values[latestSlot]!);
    return out;
  },
};

/** Baseline: the hour-of-week mean of the last ten weeks. */
export const WEEKLY_PROFILE: ForecastModel = {
  id: 'weekly-profile@1',
  inputsOf: HISTORY_ONLY,
  predict(zone, issue, end) {
    const out = nanArray(end - issue.visibleEnd);
    const profile = zone.profile(issue.visibleEnd);
    if (!profile) return out;
    for (let i = 0; i < out.length; i++) {
      out[i] = profile[zone.slotOfWeek(issue.visibleEnd + i)]!;
    }
    return out;
  },
};

/**
 * Baseline: the hour-of-week mean of the last ten weeks plus the newest value's departure from
 * it, decaying with a 24-hour e-folding time (issue 19's yardstick for the 7-72 h buckets).
 */
export const CLIMATOLOGY_ANOMALY: ForecastModel = {
  id: 'climatology-anomaly@1',
  inputsOf: HISTORY_ONLY,
  predict(zone, issue, end) {
    const out = nanArray(end - issue.visibleEnd);
    const anchor = anchorOf(zone, issue.visibleEnd);
    if (!anchor) return out;
    const step = zone.series.step;
    for (let i = 0; i < out.length; i++) {
      const slot = issue.visibleEnd + i;
      const hoursAfter = ((slot - anchor.latestSlot) * step) / HOUR_SECONDS;
      out[i] = anchor.profile[zone.slotOfWeek(slot)]! + anchor.anomaly * Math.exp(-hoursAfter / 24);
    }
    return out;
  },
};
