/**
 * What one request of the compatibility APIs may cost: the one table of the bounds on what a
 * request may ask for, and of what a costly route weighs against the per-IP rate limit
 * (docs/api.md section 9 and docs/compat.md state both). The /v1 routes weigh 1 each, as the
 * contract says, and bound their work with their own limits (points per page, export and
 * schedule windows).
 */

const DAY_HOURS = 24;

export const REQUEST_LIMITS = {
  /**
   * Carbon Aware SDK `location`: distinct names one request may list, after repeats of a name
   * are merged (there are 45 zones; a client asks for the few it can run in).
   */
  carbonAwareLocations: 50,
  /** Carbon Aware SDK observed window (`time` to `toTime`, `startTime` to `endTime`), days. */
  carbonAwareWindowDays: 100,
  /**
   * Carbon Aware SDK observed reads: window hours times distinct locations, at most (10
   * locations over 100 days, or all 45 zones over 22 days): at most 48,000 points (GB is
   * half-hourly), a few MB of JSON.
   */
  carbonAwareLocationHours: 10 * 100 * DAY_HOURS,
  /** Electricity Maps `carbon-intensity/past-range`, days: 100 days stays under 5000 half-hours. */
  electricityMapsPastRangeDays: 100,
} as const;

/** The weight of one request of a route against the rate limit, by route; 1 for any other. */
export const ROUTE_WEIGHTS: Readonly<Record<string, number>> = {
  '/compat/carbon-aware/emissions/bylocations': 5,
  '/compat/carbon-aware/emissions/bylocation': 5,
  '/compat/carbon-aware/emissions/bylocations/best': 5,
  '/compat/carbon-aware/emissions/forecasts/current': 5,
  '/compat/carbon-aware/emissions/average-carbon-intensity': 2,
  '/compat/electricitymaps/v3/carbon-intensity/past-range': 2,
};

/** What a request of the route registered as `routeUrl` counts against the rate limit. */
export const weightOf = (routeUrl: string | undefined): number =>
  (routeUrl !== undefined && ROUTE_WEIGHTS[routeUrl]) || 1;

/**
 * The distinct values of a list in the order first given: a repeat costs nothing, and the
 * response lists each once.
 */
export const distinct = (values: readonly string[]): string[] => [...new Set(values)];
