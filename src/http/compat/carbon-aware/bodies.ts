/**
 * Bodies of the Green Software Foundation Carbon Aware SDK WebAPI compatibility API
 * (docs/compat.md), in that API's models: `EmissionsData {location, time, rating, duration}`,
 * `EmissionsForecastDTO {generatedAt, requestedAt, location, dataStartAt, dataEndAt, windowSize,
 * optimalDataPoints, forecastData}` whose points are `EmissionsDataDTO {location, timestamp,
 * duration, value}`, and `CarbonIntensityDTO {location, startTime, endTime, carbonIntensity}`.
 * Pure: the route reads, this shapes and computes the windows.
 */

import { round1 } from '../../../core/units.js';

/** A .NET `DateTimeOffset` as System.Text.Json writes it in UTC: `2022-06-01T14:45:00+00:00`. */
export const dotnetTime = (epochSeconds: number): string =>
  `${new Date(epochSeconds * 1000).toISOString().slice(0, 19)}+00:00`;

/** A .NET `TimeSpan` as System.Text.Json writes it: `01:00:00` (hours may exceed 24). */
function dotnetDuration(seconds: number): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor((seconds % 3600) / 60))}:${pad(seconds % 60)}`;
}

export interface EmissionsData {
  readonly location: string;
  readonly time: string;
  readonly rating: number;
  readonly duration: string;
}

export function emissionsData(
  location: string,
  point: { ts: number; value: number },
  stepSeconds: number,
): EmissionsData {
  return {
    location,
    time: dotnetTime(point.ts),
    rating: round1(point.value),
    duration: dotnetDuration(stepSeconds),
  };
}

/** The lowest-rated points of a set (every one that ties), as `bylocations/best` answers. */
export function bestOf(points: readonly EmissionsData[]): EmissionsData[] {
  // A loop, not Math.min(...ratings): spreading a long list overflows the call stack.
  let lowest = Infinity;
  for (const point of points) if (point.rating < lowest) lowest = point.rating;
  return points.filter((point) => point.rating === lowest);
}

interface EmissionsDataDto {
  readonly location: string;
  readonly timestamp: string;
  /** Minutes. */
  readonly duration: number;
  readonly value: number;
}

export interface EmissionsForecastDto {
  readonly generatedAt: string;
  readonly requestedAt: string;
  readonly location: string;
  readonly dataStartAt: string;
  readonly dataEndAt: string;
  readonly windowSize: number;
  readonly optimalDataPoints: EmissionsDataDto[];
  readonly forecastData: EmissionsDataDto[];
}

export interface ForecastWindowRequest {
  readonly location: string;
  /** The forecast: one value per interval from `startTs`. */
  readonly startTs: number;
  readonly stepSeconds: number;
  readonly values: ArrayLike<number>;
  readonly generatedAt: number;
  readonly requestedAt: number;
  /** Scope, epoch seconds: points starting at or after `dataStartAt` and ending by `dataEndAt`. */
  readonly dataStartAt: number;
  readonly dataEndAt: number;
  /** Minutes; undefined or 0: the intervals unchanged. */
  readonly windowSize: number | undefined;
}

/**
 * The SDK's `forecasts/current` for one location, as its CarbonAwareAggregator
 * (ProcessAndValidateForecast) and EmissionsDataExtensions.RollingAverage compute it: the
 * intervals that overlap the scope `[dataStartAt, dataEndAt)`; with a `windowSize`, windows of
 * exactly `windowSize` minutes starting at `dataStartAt` (not before the first interval), one
 * interval apart, each the overlap-weighted average of the intervals under it, as long as the
 * window is fully covered by the forecast and ends by `dataEndAt`. Without a `windowSize` (or 0),
 * the intervals themselves. The optimal point is the lowest (the earliest of equals); no window
 * that fits gives empty arrays, as the SDK does.
 */
export function emissionsForecast(request: ForecastWindowRequest): EmissionsForecastDto {
  const { stepSeconds, values, startTs, dataStartAt, dataEndAt } = request;
  const scope: { ts: number; value: number }[] = [];
  for (let index = 0; index < values.length; index++) {
    const ts = startTs + index * stepSeconds;
    if (ts + stepSeconds > dataStartAt && ts < dataEndAt) scope.push({ ts, value: values[index]! });
  }
  const stepMinutes = stepSeconds / 60;
  const windowMinutes = request.windowSize ? request.windowSize : stepMinutes;
  const forecastData: EmissionsDataDto[] = [];
  const point = (ts: number, duration: number, value: number): EmissionsDataDto => ({
    location: request.location,
    timestamp: dotnetTime(ts),
    duration,
    value: round1(value),
  });
  if (!request.windowSize) {
    for (const interval of scope)
      forecastData.push(point(interval.ts, stepMinutes, interval.value));
  } else if (scope.length > 0) {
    const windowSeconds = request.windowSize * 60;
    const coveredUntil = Math.min(dataEndAt, scope.at(-1)!.ts + stepSeconds);
    for (
      let windowStart = Math.max(dataStartAt, scope[0]!.ts);
      windowStart + windowSeconds <= coveredUntil;
      windowStart += stepSeconds
    ) {
      const average = averageIntensity(
        scope,
        stepSeconds,
        windowStart,
        windowStart + windowSeconds,
      );
      if (average === undefined) break;
      forecastData.push(point(windowStart, request.windowSize, average));
    }
  }
  let optimal: EmissionsDataDto | undefined;
  for (const candidate of forecastData) {
    if (!optimal || candidate.value < optimal.value) optimal = candidate;
  }
  return {
    generatedAt: dotnetTime(request.generatedAt),
    requestedAt: dotnetTime(request.requestedAt),
    location: request.location,
    dataStartAt: dotnetTime(dataStartAt),
    dataEndAt: dotnetTime(dataEndAt),
    windowSize: windowMinutes,
    optimalDataPoints: optimal ? [optimal] : [],
    forecastData,
  };
}

export interface CarbonIntensityDto {
  readonly location: string;
  readonly startTime: string;
  readonly endTime: string;
  readonly carbonIntensity: number;
}

/**
 * The average over `[start, end)`, each interval weighted by how much of it lies inside (the
 * SDK's average-carbon-intensity). Undefined when no interval overlaps.
 */
export function averageIntensity(
  points: readonly { ts: number; value: number }[],
  stepSeconds: number,
  start: number,
  end: number,
): number | undefined {
  let weighted = 0;
  let covered = 0;
  for (const point of points) {
    const overlap = Math.min(end, point.ts + stepSeconds) - Math.max(start, point.ts);
    if (overlap <= 0) continue;
    weighted += point.value * overlap;
    covered += overlap;
  }
  return covered > 0 ? round1(weighted / covered) : undefined;
}
