import { CLIMATOLOGY_ANOMALY, PERSISTENCE } from './baselines.js';
import {
  DEPARTURE_FOUR_WEEKS,
  DEPARTURE_REFIT_DAYS,
  DEPARTURE_REGRESSION,
  DEPARTURE_TRAINING_DAYS,
} from './departure-regression.js';
import { type ForecastModel, TRAINING_DAYS } from './forecast-model.js';
import { CLIMATOLOGY, DAILY_PROFILE, DAILY_WEEKLY } from './profile-models.js';
import { DAY_SECONDS } from './series.js';
import { DAILY_UPSTREAM, DEPARTURE_UPSTREAM } from './upstream-corrected.js';
import { UPSTREAM_REGRESSION } from './upstream-regression.js';
import { CLIMATOLOGY_WEEKS, WEEKLY_OFFSET_WEEKS } from './zone-state.js';

/**
 * The forecast models: pure functions of what was known at an issue time, versioned as
 * `name@version` (a change in what a model computes is a new version). docs/forecast.md describes
 * them; the backtest (backtest.ts) measures them and decides which one serves each horizon bucket.
 * This file lists the candidates; each family has its own file (baselines, profile-models,
 * upstream-regression, upstream-corrected, departure-regression, operator-forecast), on what they
 * share: the zone's inputs and features (zone-state.ts), the model's contract and its anchor at an
 * issue (forecast-model.ts), and the least squares (linalg.ts).
 */

/**
 * Values a model looks back on from an issue: the profiles' weeks and the fitting days (for the
 * departure regression, the week since its fit, a year of past issues and their profiles' weeks),
 * and 3 days for the publication lags.
 */
export const LOOKBACK_SECONDS =
  Math.max(
    Math.max(CLIMATOLOGY_WEEKS, WEEKLY_OFFSET_WEEKS) * 7 + TRAINING_DAYS + 7,
    CLIMATOLOGY_WEEKS * 7 + DEPARTURE_TRAINING_DAYS + DEPARTURE_REFIT_DAYS + 3,
  ) * DAY_SECONDS;
/** Upstream forecasts a model looks back on: its fitting days. */
export const UPSTREAM_LOOKBACK_SECONDS = (TRAINING_DAYS + 3) * DAY_SECONDS;

/**
 * Candidates for serving, weighed walk-forward by the backtest (the first serves alone before any
 * outcome is known). The climatology-plus-anomaly baseline is one: the forecast served should
 * never be worse than it.
 */
export const CANDIDATE_MODELS: readonly ForecastModel[] = [
  CLIMATOLOGY,
  DAILY_PROFILE,
  DAILY_WEEKLY,
  UPSTREAM_REGRESSION,
  DAILY_UPSTREAM,
  DEPARTURE_REGRESSION,
  DEPARTURE_FOUR_WEEKS,
  DEPARTURE_UPSTREAM,
  PERSISTENCE,
  CLIMATOLOGY_ANOMALY,
];
