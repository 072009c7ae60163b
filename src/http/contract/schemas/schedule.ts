import { Type, type Static } from '@sinclair/typebox';
import { limitText, SCHEDULE_LIMITS } from '../limits.js';
import { BASES } from '../../../core/factors.js';
import {
  BasisParam,
  DateTime,
  InstantParam,
  ProductionOnlyParam,
  Unit,
  ZonesParam,
} from './common.js';

/** /v1/schedule: the best window for a job. */

const ScheduleSlot = Type.Object(
  {
    ts: DateTime,
    gco2eq_kwh: Type.Number({ description: 'The value planned on for this interval, 1 decimal.' }),
  },
  { additionalProperties: false },
);

const scheduleWindowFields = {
  zone: Type.String({ description: 'Canonical code of the zone.' }),
  start: Type.String({
    ...DateTime,
    description: "Start of the first interval the job runs in (on the zone's grid).",
  }),
  end: Type.String({
    ...DateTime,
    description:
      'End of the last interval it runs in: the duration rounded up to whole intervals of the ' +
      'zone (for an interruptible job, the end of its last slot).',
  }),
  gco2eq_kwh: Type.Number({
    description:
      'Mean intensity over the intervals the job runs in, 1 decimal: published values for past ' +
      'intervals, the forecast (or its p90) for the others.',
  }),
};

export const ScheduleWindow = Type.Object(scheduleWindowFields, {
  $id: 'ScheduleWindow',
  additionalProperties: false,
});

export const ScheduleResponse = Type.Object(
  {
    unit: Unit,
    basis: Type.Union([Type.Literal('default'), ...BASES.map((basis) => Type.Literal(basis))], {
      description:
        "The basis asked, or `default` without one: each zone's own value (GB: the operator's).",
    }),
    estimator: Type.Union([Type.Literal('expected'), Type.Literal('p90')]),
    duration_minutes: Type.Integer({ minimum: 1, maximum: SCHEDULE_LIMITS.maxDurationMinutes }),
    earliest: Type.String({ ...DateTime, description: 'The earliest start used.' }),
    deadline: Type.String({ ...DateTime, description: 'The deadline used (exclusive).' }),
    best: Type.Object(
      {
        ...scheduleWindowFields,
        slots: Type.Optional(
          Type.Array(ScheduleSlot, {
            description: 'Only with interruptible=true: the intervals the job runs in, by ts.',
          }),
        ),
      },
      {
        additionalProperties: false,
        description: 'The lowest mean of all: the first of `options`.',
      },
    ),
    now: Type.Union([Type.Ref(ScheduleWindow), Type.Null()], {
      description:
        'The job run in one stretch from the first interval boundary at or after `earliest`, in ' +
        'the first zone listed; null when that stretch has no values (then `note` says why).',
    }),
    savings: Type.Union(
      [
        Type.Object(
          {
            gco2eq_kwh: Type.Number({ description: '`now` minus `best`, per kWh, 1 decimal.' }),
            pct: Type.Number({ description: 'The saving over `now`, in %, 1 decimal.' }),
            grams: Type.Optional(
              Type.Number({ description: 'Only with energy_kwh: the saving times energy_kwh.' }),
            ),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'Of `best` over `now`; null when `now` is null.' },
    ),
    options: Type.Array(Type.Ref(ScheduleWindow), {
      description:
        'The best window of every zone that has one, ascending by gco2eq_kwh (ties: earlier ' +
        'start, then the zone listed first).',
    }),
    note: Type.Optional(
      Type.String({
        description: 'Only when a zone asked is left out of options, or `now` is null: why.',
      }),
    ),
  },
  { $id: 'ScheduleResponse', additionalProperties: false },
);
export type ScheduleResponse = Static<typeof ScheduleResponse>;

/** `zones` of a schedule: at most `most` zones, the number a list of each once can name. */
const scheduleZones = (most: string) =>
  ZonesParam(
    `At most ${most} (a repeat counted once). The first is the home zone, where \`now\` runs; ` +
      'ties go to the zone listed first.',
  );

export const ScheduleQuery = Type.Object(
  {
    zones: scheduleZones('45'),
    duration_minutes: Type.Optional(
      Type.String({
        description:
          `How long the job runs: a whole number of minutes, 1 to ${SCHEDULE_LIMITS.maxDurationMinutes}. Rounded up to whole ` +
          `intervals of each zone. Default ${SCHEDULE_LIMITS.defaultDurationMinutes}.`,
        examples: ['90'],
      }),
    ),
    earliest: Type.Optional(
      Type.String({
        ...InstantParam,
        description: `The job starts at or after this. ${InstantParam.description} Default: the request time.`,
      }),
    ),
    deadline: Type.Optional(
      Type.String({
        ...InstantParam,
        description:
          `The job ends at or before this; at most ${SCHEDULE_LIMITS.maxAheadHours} hours after the request time and after ` +
          `earliest. ${InstantParam.description} Default: earliest + ${SCHEDULE_LIMITS.defaultWindowHours} hours (at most the ` +
          `request time + ${SCHEDULE_LIMITS.maxAheadHours} hours).`,
      }),
    ),
    interruptible: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], {
        description: '`true`: the job may run in any intervals (the lowest). Default `false`.',
      }),
    ),
    estimator: Type.Optional(
      Type.Union([Type.Literal('expected'), Type.Literal('p90')], {
        description:
          '`expected` (default): plan on the forecast; `p90`: on its pessimistic band. ' +
          'Published values count as exact either way.',
      }),
    ),
    basis: Type.Optional(BasisParam),
    accounting: Type.Optional(ProductionOnlyParam),
    energy_kwh: Type.Optional(
      Type.String({
        description: `Energy the job uses, kWh, above 0 (at most ${limitText(SCHEDULE_LIMITS.maxEnergyKwh)}): adds \`savings.grams\`.`,
        examples: ['12.5'],
      }),
    ),
  },
  { required: ['zones'] },
);

/** The query with `ZONES=all` (extensions §16): as many zones as are served, not 45. */
export const ScheduleQueryOfAll = Type.Object(
  { ...ScheduleQuery.properties, zones: scheduleZones('one per zone served') },
  { required: ['zones'] },
);
