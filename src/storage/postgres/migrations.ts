/**
 * Versioned schema of the PostgreSQL store, applied in order at start under an advisory lock.
 * Never edit a released migration: add the next version.
 *
 * `zone` uses the "C" collation so that (zone, ts) order, and therefore `scanStored` paging,
 * is bytewise as in SQLite rather than locale-dependent. The primary key (zone, ts) serves every
 * read: windows, newest ts, keyset scans and the per-zone skip scan of `latestPerZone`.
 */
export const POSTGRES_MIGRATIONS: readonly { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE readings (
        zone     TEXT COLLATE "C" NOT NULL,
        ts       BIGINT           NOT NULL,  -- epoch seconds, start of the interval
        value    DOUBLE PRECISION,           -- the intensity in UNIT (core/units.ts), full precision
        method   TEXT             NOT NULL,
        complete BOOLEAN          NOT NULL,  -- false: partial mix, kept but not served
        mix      JSONB,                      -- {category: MWh} behind a computed value
        PRIMARY KEY (zone, ts)
      );
      CREATE TABLE meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
      INSERT INTO meta (key, value) VALUES ('data_version', 0);
      CREATE TABLE ingest_reports (
        id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        source      TEXT   NOT NULL,
        started_at  BIGINT NOT NULL,
        finished_at BIGINT NOT NULL,
        report      JSONB  NOT NULL
      );
      CREATE INDEX ingest_reports_source ON ingest_reports (source, id);
    `,
  },
  {
    // Per-row versions and tombstones let every API instance follow the store incrementally.
    version: 2,
    sql: `
      ALTER TABLE readings ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
      CREATE INDEX readings_version ON readings (version);
      CREATE TABLE reading_deletions (
        zone    TEXT COLLATE "C" NOT NULL,
        ts      BIGINT           NOT NULL,
        version BIGINT           NOT NULL,
        PRIMARY KEY (zone, ts)
      );
      CREATE INDEX reading_deletions_version ON reading_deletions (version);
    `,
  },
  {
    // One ingester at a time across instances; expiry is measured on the server's clock.
    version: 3,
    sql: `
      CREATE TABLE leases (
        name       TEXT        PRIMARY KEY,
        holder     TEXT        NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
      );
    `,
  },
  {
    // Values on each basis beside the default one, and upstream forecasts in their own table
    // (never readings). The GB forecast reading moves there, issued at its own ts (its real issue
    // time was not kept); direct values are computed from the stored mixes on the next start.
    version: 4,
    sql: `
      ALTER TABLE readings ADD COLUMN lifecycle DOUBLE PRECISION;
      ALTER TABLE readings ADD COLUMN direct DOUBLE PRECISION;
      UPDATE readings SET lifecycle = value WHERE method = 'computed:v1' AND complete;
      CREATE TABLE forecasts (
        zone      TEXT COLLATE "C" NOT NULL,
        ts        BIGINT           NOT NULL,  -- epoch seconds, start of the interval forecast
        kind      TEXT             NOT NULL,  -- what is forecast, e.g. uk-operator:intensity
        issued_at BIGINT           NOT NULL,  -- epoch seconds
        value     DOUBLE PRECISION NOT NULL,
        version   BIGINT           NOT NULL,
        PRIMARY KEY (zone, kind, ts, issued_at)
      );
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
    version: 5,
    sql: `
      CREATE TABLE backtests (
        id         BIGSERIAL PRIMARY KEY,
        created_at BIGINT NOT NULL,  -- epoch seconds
        run        TEXT   NOT NULL   -- JSON (core/forecast/backtest.ts BacktestRun)
      );
    `,
  },
  {
    // Windows a backfill wrote whole (readings, mixes and upstream forecasts in one transaction),
    // so that a later backfill skips exactly them, whatever its chunks.
    version: 6,
    sql: `
      CREATE TABLE backfilled (
        zone    TEXT COLLATE "C" NOT NULL,
        from_ts BIGINT           NOT NULL,  -- epoch seconds, first hour
        to_ts   BIGINT           NOT NULL,  -- epoch seconds, end (exclusive)
        PRIMARY KEY (zone, from_ts, to_ts)
      );
    `,
  },
  {
    // Webhooks (extensions §13): subscriptions, and a queue of deliveries keyed by event id
    // that keeps delivered and dropped ones for a while, so an event is never queued twice.
    version: 7,
    sql: `
      CREATE TABLE subscriptions (
        id             TEXT   PRIMARY KEY,
        secret         TEXT   NOT NULL,
        url            TEXT   NOT NULL,
        zones          TEXT   NOT NULL,  -- JSON: codes, or "all"
        basis          TEXT,
        condition      TEXT   NOT NULL,  -- JSON (core/webhooks/conditions.ts Condition)
        client_address TEXT   NOT NULL,
        created_at     BIGINT NOT NULL,  -- epoch ms
        memory         TEXT   NOT NULL   -- JSON (ZoneMemory)
      );
      CREATE INDEX subscriptions_client_address ON subscriptions (client_address);
      CREATE TABLE webhook_deliveries (
        event_id        TEXT    PRIMARY KEY,
        subscription_id TEXT    NOT NULL,
        body            TEXT    NOT NULL,
        first_due_at    BIGINT  NOT NULL,  -- epoch ms
        due_at          BIGINT  NOT NULL,  -- epoch ms
        failures        INTEGER NOT NULL,
        state           TEXT    NOT NULL,  -- pending, delivered, dropped
        settled_at      BIGINT             -- epoch ms, once delivered or dropped
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, due_at);
      CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id);
      CREATE TABLE webhook_state (
        key   TEXT   PRIMARY KEY,
        value BIGINT NOT NULL
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
    // Changes are paged by (version, zone, ts), inside a write larger than a page too: without
    // the key in the index, each page sorted every row of the versions it reads. (SQLite needs
    // none: its readings_version holds the key of the WITHOUT ROWID table.)
    version: 9,
    sql: `
      CREATE INDEX readings_version_key ON readings (version, zone, ts);
      DROP INDEX readings_version;
    `,
  },
  {
    // The per-network cap of subscriptions (issue 37) counts the creator's network. Rows from
    // before: an IPv4 address's /24 is its text up to the last dot; an IPv6 address, whose /64
    // SQL cannot spell, counts as its own network until it is deleted.
    version: 10,
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
    version: 11,
    sql: `
      CREATE TABLE flows (
        graph     TEXT COLLATE "C" NOT NULL,  -- europe | us
        from_node TEXT COLLATE "C" NOT NULL,
        to_node   TEXT COLLATE "C" NOT NULL,
        ts        BIGINT           NOT NULL,  -- epoch seconds, start of the hour
        mw        DOUBLE PRECISION NOT NULL,  -- mean MW over the hour, as its upstream reports it
        version   BIGINT           NOT NULL,
        PRIMARY KEY (graph, ts, from_node, to_node)
      );
      CREATE INDEX flows_version ON flows (graph, version);
      CREATE TABLE flow_borders (
        graph     TEXT COLLATE "C" NOT NULL,
        from_node TEXT COLLATE "C" NOT NULL,
        to_node   TEXT COLLATE "C" NOT NULL,
        first_ts  BIGINT           NOT NULL,  -- epoch seconds, the first hour stored
        PRIMARY KEY (graph, from_node, to_node)
      );
    `,
  },
  {
    // The consumption series (extensions §15): each solved zone's flow-traced values and mix per
    // hour, solved from the stored mixes and flows (src/consumption/) and replaced hour by hour
    // when an input changes. A row's version is the data version of the write that last changed
    // it, for followers; the graph's cursor (meta `consumption_cursor:<graph>`) is the data
    // version its inputs are solved up to.
    version: 12,
    sql: `
      CREATE TABLE consumption (
        zone              TEXT COLLATE "C" NOT NULL,
        ts                BIGINT           NOT NULL,  -- epoch seconds, start of the hour
        graph             TEXT COLLATE "C" NOT NULL,  -- europe | us: the graph it was traced in
        lifecycle         DOUBLE PRECISION NOT NULL,  -- the intensity consumed (UNIT), full precision
        direct            DOUBLE PRECISION NOT NULL,
        mix               JSONB            NOT NULL,  -- {traced category: MWh consumed}
        imports           JSONB            NOT NULL,  -- {neighbour: MWh}
        exports           JSONB            NOT NULL,  -- {neighbour: MWh}
        estimated_pct     DOUBLE PRECISION NOT NULL,
        estimated_borders JSONB            NOT NULL,  -- [neighbour]
        renewable_pct     DOUBLE PRECISION NOT NULL,
        low_carbon_pct    DOUBLE PRECISION NOT NULL,
        version           BIGINT           NOT NULL,
        PRIMARY KEY (zone, ts)
      );
      CREATE INDEX consumption_graph_ts ON consumption (graph, ts);
      CREATE INDEX consumption_version ON consumption (version);
    `,
  },
  {
    // One row per write that changed the consumption series, with the first hour it replaced: a
    // follower reloads from there, removed rows included (a removed row leaves no version).
    version: 13,
    sql: `
      CREATE TABLE consumption_writes (
        version BIGINT PRIMARY KEY,       -- the data version the write took
        graph   TEXT COLLATE "C" NOT NULL,
        from_ts BIGINT           NOT NULL  -- epoch seconds, the first hour the write replaced
      );
    `,
  },
  {
    // What the next backtest resumes from (issue 38), kept with the newest run only.
    version: 14,
    sql: `ALTER TABLE backtests ADD COLUMN state BYTEA;`,
  },
  {
    // The states one per zone-basis (issue 38): read, checked and written each on its own, a
    // damaged one costs that zone-basis alone. The one state of every zone-basis a version 14
    // store kept is dropped: the next run starts from every zone's first issue, once.
    version: 15,
    sql: `
      CREATE TABLE backtest_states (
        forecast TEXT COLLATE "C" PRIMARY KEY,  -- zone|basis
        state    BYTEA NOT NULL                 -- forecast/backtest-state-bytes.ts
      );
      ALTER TABLE backtests DROP COLUMN state;
    `,
  },
];
