/**
 * Versioned schema of the SQLite store, applied in order at start. Never edit a released
 * migration: add the next version.
 */
export const SQLITE_MIGRATIONS: readonly { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE readings (
        zone     TEXT    NOT NULL,
        ts       INTEGER NOT NULL,  -- epoch seconds, start of the interval
        value    REAL,              -- the intensity in UNIT (core/units.ts), full precision
        method   TEXT    NOT NULL,
        complete INTEGER NOT NULL,  -- 1: published; 0: partial mix, kept but not served
        mix      TEXT,              -- JSON {category: MWh} behind a computed value
        PRIMARY KEY (zone, ts)
      ) WITHOUT ROWID;
      CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      INSERT INTO meta (key, value) VALUES ('data_version', 0);
      CREATE TABLE ingest_reports (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        source      TEXT    NOT NULL,
        started_at  INTEGER NOT NULL,
        finished_at INTEGER NOT NULL,
        report      TEXT    NOT NULL
      );
      CREATE INDEX ingest_reports_source ON ingest_reports (source, id);
    `,
  },
  {
    // Per-row versions and tombstones let every API instance follow the store incrementally.
    version: 2,
    sql: `
      ALTER TABLE readings ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX readings_version ON readings (version);
      CREATE TABLE reading_deletions (
        zone    TEXT    NOT NULL,
        ts      INTEGER NOT NULL,
        version INTEGER NOT NULL,
        PRIMARY KEY (zone, ts)
      ) WITHOUT ROWID;
      CREATE INDEX reading_deletions_version ON reading_deletions (version);
    `,
  },
  {
    // One ingester at a time across processes sharing the file.
    version: 3,
    sql: `
      CREATE TABLE leases (
        name       TEXT    PRIMARY KEY,
        holder     TEXT    NOT NULL,
        expires_ms INTEGER NOT NULL
      );
    `,
  },
  {
    // Values on each basis beside the default one, and upstream forecasts in their own table
    // (never readings). The GB forecast reading moves there, issued at its own ts (its real issue
    // time was not kept); direct values are computed from the stored mixes on the next start.
    version: 4,
    sql: `
      ALTER TABLE readings ADD COLUMN lifecycle REAL;
      ALTER TABLE readings ADD COLUMN direct REAL;
      UPDATE readings SET lifecycle = value WHERE method = 'computed:v1' AND complete = 1;
      CREATE TABLE forecasts (
        zone      TEXT    NOT NULL,
        ts        INTEGER NOT NULL,  -- epoch seconds, start of the interval forecast
        kind      TEXT    NOT NULL,  -- what is forecast, e.g. uk-operator:intensity
        issued_at INTEGER NOT NULL,  -- epoch seconds
        value     REAL    NOT NULL,
        version   INTEGER NOT NULL,
        PRIMARY KEY (zone, kind, ts, issued_at)
      ) WITHOUT ROWID;
      CREATE INDEX forecasts_version ON forecasts (version);
      INSERT INTO forecasts (zone, ts, kind, issued_at, value, version)
        SELECT zone, ts, 'uk-operator:intensity', ts, value, version FROM readings
        WHERE method = 'upstream:uk-operator:forecast' AND value IS NOT NULL;
      DELETE FROM readings WHERE method = 'upstream:uk-operator:forecast';
      INSERT INTO meta (key, value)
        SELECT 'recompute_needed', 1 WHERE EXISTS (SELECT 1 FROM readings WHERE mix IS NOT NULL);
    `,
  },
  {
    // Walk-forward backtests of the forecast models, newest last; only the newest is read.
    // Upstream forecasts are read by kind and zone over windows of intervals.
    version: 5,
    sql: `
      CREATE TABLE backtests (
        id         INTEGER PRIMARY KEY,
        created_at INTEGER NOT NULL,  -- epoch seconds
        run        TEXT    NOT NULL   -- JSON (core/forecast/backtest.ts BacktestRun)
      );
    `,
  },
  {
    // Windows a backfill wrote whole (readings, mixes and upstream forecasts in one transaction),
    // so that a later backfill skips exactly them, whatever its chunks.
    version: 6,
    sql: `
      CREATE TABLE backfilled (
        zone    TEXT    NOT NULL,
        from_ts INTEGER NOT NULL,  -- epoch seconds, first hour
        to_ts   INTEGER NOT NULL,  -- epoch seconds, end (exclusive)
        PRIMARY KEY (zone, from_ts, to_ts)
      ) WITHOUT ROWID;
    `,
  },
  {
    // Webhooks (extensions §13): subscriptions, and a queue of deliveries keyed by event id
    // that keeps delivered and dropped ones for a while, so an event is never queued twice.
    version: 7,
    sql: `
      CREATE TABLE subscriptions (
        id             TEXT    PRIMARY KEY,
        secret         TEXT    NOT NULL,
        url            TEXT    NOT NULL,
        zones          TEXT    NOT NULL,  -- JSON: codes, or "all"
        basis          TEXT,
        condition      TEXT    NOT NULL,  -- JSON (core/webhooks/conditions.ts Condition)
        client_address TEXT    NOT NULL,
        created_at     INTEGER NOT NULL,  -- epoch ms
        memory         TEXT    NOT NULL   -- JSON (ZoneMemory)
      );
      CREATE INDEX subscriptions_client_address ON subscriptions (client_address);
      CREATE TABLE webhook_deliveries (
        event_id        TEXT    PRIMARY KEY,
        subscription_id TEXT    NOT NULL,
        body            TEXT    NOT NULL,
        first_due_at    INTEGER NOT NULL,  -- epoch ms
        due_at          INTEGER NOT NULL,  -- epoch ms
        failures        INTEGER NOT NULL,
        state           TEXT    NOT NULL,  -- pending, delivered, dropped
        settled_at      INTEGER            -- epoch ms, once delivered or dropped
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, due_at);
      CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id);
      CREATE TABLE webhook_state (
        key   TEXT    PRIMARY KEY,
        value INTEGER NOT NULL
      );
    `,
  },
  {
    // A stream replaying from Last-Event-ID reads the served forecast kind by version: without
    // (kind, version), each page walked every newer forecast of every other kind.
    version: 8,
    sql: `
      CREATE INDEX forecasts_kind_version ON forecasts (kind, version);
    `,
  },
  {
    // The per-network cap of subscriptions (issue 37) counts the creator's network. Rows from
    // before: an IPv4 address's /24 is its text up to the last dot; an IPv6 address, whose /64
    // SQL cannot spell, counts as its own network until it is deleted.
    version: 9,
    sql: `
      ALTER TABLE subscriptions ADD COLUMN client_network TEXT NOT NULL DEFAULT '';
      UPDATE subscriptions SET client_network = CASE
        WHEN client_address LIKE '%:%' THEN client_address
        ELSE rtrim(rtrim(client_address, '0123456789'), '.') END;
      CREATE INDEX subscriptions_client_network ON subscriptions (client_network);
    `,
  },
  {
    // Hourly flows between the nodes of the two flow graphs (extensions §15; core/flows.ts), and
    // the first hour of each direction. A row's version is the data version of the write that
    // last changed its value: the hours to solve again are read by version.
    version: 10,
    sql: `
      CREATE TABLE flows (
        graph     TEXT    NOT NULL,  -- europe | us
        from_node TEXT    NOT NULL,
        to_node   TEXT    NOT NULL,
        ts        INTEGER NOT NULL,  -- epoch seconds, start of the hour
        mw        REAL    NOT NULL,  -- mean MW over the hour, as its upstream reports it
        version   INTEGER NOT NULL,
        PRIMARY KEY (graph, ts, from_node, to_node)
      ) WITHOUT ROWID;
      CREATE INDEX flows_version ON flows (graph, version);
      CREATE TABLE flow_borders (
        graph     TEXT    NOT NULL,
        from_node TEXT    NOT NULL,
        to_node   TEXT    NOT NULL,
        first_ts  INTEGER NOT NULL,  -- epoch seconds, the first hour stored
        PRIMARY KEY (graph, from_node, to_node)
      ) WITHOUT ROWID;
    `,
  },
  {
    // The consumption series (extensions §15): each solved zone's flow-traced values and mix per
    // hour, solved from the stored mixes and flows (src/consumption/) and replaced hour by hour
    // when an input changes. A row's version is the data version of the write that last changed
    // it, for followers; the graph's cursor (meta `consumption_cursor:<graph>`) is the data
    // version its inputs are solved up to.
    version: 11,
    sql: `
      CREATE TABLE consumption (
        zone              TEXT    NOT NULL,
        ts                INTEGER NOT NULL,  -- epoch seconds, start of the hour
        graph             TEXT    NOT NULL,  -- europe | us: the graph it was traced in
        lifecycle         REAL    NOT NULL,  -- the intensity consumed (UNIT), full precision
        direct            REAL    NOT NULL,
        mix               TEXT    NOT NULL,  -- JSON {traced category: MWh consumed}
        imports           TEXT    NOT NULL,  -- JSON {neighbour: MWh}
        exports           TEXT    NOT NULL,  -- JSON {neighbour: MWh}
        estimated_pct     REAL    NOT NULL,
        estimated_borders TEXT    NOT NULL,  -- JSON [neighbour]
        renewable_pct     REAL    NOT NULL,
        low_carbon_pct    REAL    NOT NULL,
        version           INTEGER NOT NULL,
        PRIMARY KEY (zone, ts)
      ) WITHOUT ROWID;
      CREATE INDEX consumption_graph_ts ON consumption (graph, ts);
      CREATE INDEX consumption_version ON consumption (version);
    `,
  },
  {
    // One row per write that changed the consumption series, with the first hour it replaced: a
    // follower reloads from there, removed rows included (a removed row leaves no version).
    version: 12,
    sql: `
      CREATE TABLE consumption_writes (
        version INTEGER PRIMARY KEY,  -- the data version the write took
        graph   TEXT    NOT NULL,
        from_ts INTEGER NOT NULL      -- epoch seconds, the first hour the write replaced
      );
    `,
  },
  {
    // What the next backtest resumes from (issue 38), kept with the newest run only.
    version: 13,
    sql: `ALTER TABLE backtests ADD COLUMN state BLOB;`,
  },
  {
    // The states one per zone-basis (issue 38): read, checked and written each on its own, a
    // damaged one costs that zone-basis alone. The one state of every zone-basis a version 13
    // store kept is dropped: the next run starts from every zone's first issue, once.
    version: 14,
    sql: `
      CREATE TABLE backtest_states (
        forecast TEXT PRIMARY KEY,  -- zone|basis
        state    BLOB NOT NULL      -- forecast/backtest-state-bytes.ts
      );
      ALTER TABLE backtests DROP COLUMN state;
    `,
  },
];
