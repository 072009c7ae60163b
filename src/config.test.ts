import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, redactUrl } from './config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:data/gridco2.db',
      rateLimitPerMinute: 60,
      trustProxy: [],
      logLevel: 'info',
      redisUrl: null,
      ingest: true,
      sources: {
        'europe-tso': { baseUrl: 'https://web-api.tp.entsoe.eu/api', credential: null },
        'us-agency': { baseUrl: 'https://api.eia.gov/v2', credential: null },
        'uk-operator': { baseUrl: 'https://api.carbonintensity.org.uk', credential: null },
      },
      streamMax: 1000,
      demo: false,
    });
  });

  it('reads DASHBOARD, on by default', () => {
    expect(loadConfig({}).dashboard).toBe(true);
    expect(loadConfig({ DASHBOARD: 'off' }).dashboard).toBe(false);
    expect(loadConfig({ DASHBOARD: 'ON' }).dashboard).toBe(true);
    expect(() => loadConfig({ DASHBOARD: 'no' })).toThrow(
      'DASHBOARD must be one of on, off, got "no"',
    );
  });

  it('reads FLOWS, on by default', () => {
    expect(loadConfig({}).flows).toBe(true);
    expect(loadConfig({ FLOWS: 'off' }).flows).toBe(false);
    expect(loadConfig({ FLOWS: 'On' }).flows).toBe(true);
    expect(() => loadConfig({ FLOWS: 'no' })).toThrow('FLOWS must be one of on, off, got "no"');
  });

  it('reads ZONES: the 45 of the contract by default, or all', () => {
    expect(loadConfig({}).zones).toBe('contract');
    expect(loadConfig({ ZONES: 'contract' }).zones).toBe('contract');
    expect(loadConfig({ ZONES: ' All ' }).zones).toBe('all');
    expect(() => loadConfig({ ZONES: 'EE,SK' })).toThrow(
      'ZONES must be one of contract, all, got "EE,SK"',
    );
  });

  it('reads FORECAST_NICENESS, a nice value from 0 to 19, 10 when unset', () => {
    expect(loadConfig({}).forecastNiceness).toBe(10);
    expect(loadConfig({ FORECAST_NICENESS: '0' }).forecastNiceness).toBe(0);
    expect(() => loadConfig({ FORECAST_NICENESS: '20' })).toThrow(
      /FORECAST_NICENESS must be a whole number from 0 to 19, got "20"/,
    );
  });

  it('reads STREAM_MAX, a whole number of at least 1', () => {
    expect(loadConfig({ STREAM_MAX: '2500' }).streamMax).toBe(2500);
    expect(() => loadConfig({ STREAM_MAX: '0' })).toThrow(/STREAM_MAX must be a whole number/);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://gridco2@db:5432/gridco2',
      RATE_LIMIT_PER_MINUTE: '120',
      TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,::1',
      LOG_LEVEL: 'WARN',
      REDIS_URL: 'redis://127.0.0.1:6379',
      INGEST: 'off',
      ENTSOE_BASE_URL: 'http://127.0.0.1:1234/api/',
      ENTSOE_TOKEN: 'secret',
      EIA_BASE_URL: 'http://127.0.0.1:1235/v2',
      EIA_API_KEY: 'key',
      NESO_BASE_URL: 'http://127.0.0.1:1236',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      rateLimitPerMinute: 120,
      trustProxy: ['10.0.0.1', '192.168.0.0/16', '::1'],
      logLevel: 'warn',
      redisUrl: 'redis://127.0.0.1:6379',
      ingest: false,
      sources: {
        'europe-tso': { baseUrl: 'http://127.0.0.1:1234/api', credential: 'secret' },
        'us-agency': { baseUrl: 'http://127.0.0.1:1235/v2', credential: 'key' },
        'uk-operator': { baseUrl: 'http://127.0.0.1:1236', credential: null },
      },
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.sources['europe-tso'])).toBe(true);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['RATE_LIMIT_PER_MINUTE', '0'],
    ['RATE_LIMIT_PER_MINUTE', '1.5'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['DATABASE_URL', 'sqlite:'],
    ['TRUST_PROXY', 'yes'],
    ['TRUST_PROXY', '10.0.0.1/33'],
    ['LOG_LEVEL', 'verbose'],
    ['REDIS_URL', 'localhost:6379'],
    ['INGEST', 'maybe'],
    ['FLOWS', 'yes'],
    ['ZONES', 'every'],
    ['EIA_BASE_URL', 'ftp://example.org'],
    ['NESO_BASE_URL', 'not a url'],
    ['WEBHOOK_ALLOW', 'https://hooks.example.org/in'],
    ['WEBHOOK_ALLOW', ' , '],
    ['WEBHOOK_ALLOW', 'hooks.example.org,'],
    ['WEBHOOK_ALLOW', 'hooks.example.org:8443'],
  ])('stops on %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});

describe('configuration errors', () => {
  // Each names the variable, what is accepted and what was given (never a password).
  it.each([
    [
      'HOST',
      '999.1.1.1',
      'HOST must be an IP address of this machine (127.0.0.1, 0.0.0.0 for all IPv4 addresses, :: for all) or a host name that resolves to one, got "999.1.1.1"',
    ],
    [
      'HOST',
      'my host',
      'HOST must be an IP address of this machine (127.0.0.1, 0.0.0.0 for all IPv4 addresses, :: for all) or a host name that resolves to one, got "my host"',
    ],
    [
      'HOST',
      '::g',
      'HOST must be an IP address of this machine (127.0.0.1, 0.0.0.0 for all IPv4 addresses, :: for all) or a host name that resolves to one, got "::g"',
    ],
    [
      'DATABASE_URL',
      'sqlite:',
      'DATABASE_URL=sqlite: names no file: give its path, as in sqlite:<path> (e.g. sqlite:data/gridco2.db) or postgres://user@host:port/database',
    ],
    [
      'DATABASE_URL',
      'mysql://u:pw@db/x',
      'DATABASE_URL must be sqlite:<path> (e.g. sqlite:data/gridco2.db) or postgres://user@host:port/database, got a URL of scheme "mysql:"',
    ],
    [
      'DATABASE_URL',
      'data/gridco2.db',
      'DATABASE_URL must be sqlite:<path> (e.g. sqlite:data/gridco2.db) or postgres://user@host:port/database, got a value without a scheme',
    ],
    [
      'REDIS_URL',
      'localhost:6379',
      'REDIS_URL must be a URL starting with redis:// or rediss://, got "localhost:6379"',
    ],
    [
      'REDIS_URL',
      'http://:pw@cache:6379',
      'REDIS_URL must be a URL starting with redis:// or rediss://, got "http://:***@cache:6379"',
    ],
    [
      'EIA_BASE_URL',
      'ftp://example.org',
      'EIA_BASE_URL must be a URL starting with http:// or https://, got "ftp://example.org"',
    ],
    ['PORT', 'eighty', 'PORT must be a whole number from 0 to 65535, got "eighty"'],
    [
      'LOG_LEVEL',
      'verbose',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    ],
  ])('%s=%s: %s', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new ConfigError(message));
  });

  it('takes WEBHOOK_ALLOW host names, IP addresses, *.domain and *', () => {
    const value = ' *.example.org, hooks.example.com,127.0.0.1, [::1], fd00::2 ';
    expect(loadConfig({ WEBHOOK_ALLOW: value }).webhooks.allow).toEqual([
      '*.example.org',
      'hooks.example.com',
      '127.0.0.1',
      '[::1]',
      'fd00::2',
    ]);
    expect(loadConfig({}).webhooks.allow).toEqual(['*']);
    expect(() => loadConfig({ WEBHOOK_ALLOW: 'a/b' })).toThrow(
      new ConfigError(
        `WEBHOOK_ALLOW must be ${'a comma-separated list of host patterns: a host name, an IP address, *.example.org or *'}, got "a/b"`,
      ),
    );
  });

  it.each(['localhost', 'gridco2.example.org', '0.0.0.0', '::', '::1', '192.168.1.20'])(
    'takes HOST=%s',
    (value) => {
      expect(loadConfig({ HOST: value }).host).toBe(value);
    },
  );
});

describe('MAX_CONNECTIONS and the open-file limit', () => {
  it.each([
    // [MAX_CONNECTIONS, ulimit -n, connections, warned]
    [undefined, 1_048_576, 10_000, false],
    [undefined, Infinity, 10_000, false],
    [undefined, null, 10_000, false],
    [undefined, 10_064, 10_000, false],
    [undefined, 10_063, 9_999, true],
    [undefined, 1024, 960, true],
    [undefined, 16, 1, true],
    ['500', 1024, 500, false],
    ['5000', 1024, 5000, true],
  ])('MAX_CONNECTIONS=%s under ulimit -n %s: %i, warned: %s', (value, limit, expected, warned) => {
    const { connections } = loadConfig(
      value === undefined ? {} : { MAX_CONNECTIONS: value },
      limit,
    );
    expect(connections.maxConnections).toBe(expected);
    expect(connections.limitWarning !== null).toBe(warned);
  });

  it('says what the limit is, what it costs and how to raise it', () => {
    expect(loadConfig({}, 1024).connections.limitWarning).toBe(
      'this process may open 1024 files (ulimit -n): MAX_CONNECTIONS is 960 instead of 10000, ' +
        '64 files kept for the store, Redis and the upstreams; raise it (ulimit -n, systemd ' +
        'LimitNOFILE=, docker --ulimit nofile=) to at least 10064',
    );
    expect(loadConfig({ MAX_CONNECTIONS: '5000' }, 1024).connections.limitWarning).toBe(
      'MAX_CONNECTIONS=5000 but this process may open only 1024 files (ulimit -n): past about ' +
        '960 connections new clients are reset before idle ones can be closed; raise it ' +
        '(ulimit -n, systemd LimitNOFILE=, docker --ulimit nofile=) to at least 5064, or lower ' +
        'MAX_CONNECTIONS',
    );
  });
});

describe('redactUrl', () => {
  it.each([
    ['postgres://someone:secret@127.0.0.1:1/x', 'postgres://someone:***@127.0.0.1:1/x'],
    ['postgresql://:secret@db/x', 'postgresql://:***@db/x'],
    [
      'postgres://u@db/x?password=secret&sslmode=require',
      'postgres://u@db/x?password=***&sslmode=require',
    ],
    [
      'postgres://u@db/x?sslmode=require&sslpassword=secret',
      'postgres://u@db/x?sslmode=require&sslpassword=***',
    ],
    ['redis://:secret@cache:6379', 'redis://:***@cache:6379'],
    ['postgres://gridco2@db:5432/gridco2', 'postgres://gridco2@db:5432/gridco2'],
    ['sqlite:data/gridco2.db', 'sqlite:data/gridco2.db'],
  ])('shows %s as %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});
