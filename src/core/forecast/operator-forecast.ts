import { type ForecastModel, nanArray } from './forecast-model.js';

/** NESO's fw48h, republished unchanged: GB's default forecast. */
export const OPERATOR_FORECAST: ForecastModel = {
  id: 'upstream:uk-operator:forecast',
  inputsOf: () => ['uk-operator:fw48h'],
  predict(zone, issue, end) {
    const out = nanArray(end - issue.visibleEnd);
    const operator = zone.inputs.upstream.operatorForecast;
    if (!operator) return out;
    for (let i = 0; i < out.length; i++) {
      out[i] = operator.valueAt(issue.visibleEnd + i, issue.issueTs);
    }
    return out;
  },
};
