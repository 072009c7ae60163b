import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

/**
 * deploy/Dockerfile without Docker (none where this was written, nor in CI): the runtime stage is
 * replayed from the Dockerfile's own instructions. Its COPY lines build a tree in a temporary
 * directory (the build stage's output is the repository's `dist/`, which `npm test` builds first,
 * and the production part of `node_modules`, as `npm prune --omit=dev` leaves it); everything is
 * read-only except the VOLUME directory, owned by the user that runs the entry point; ENTRYPOINT
 * and CMD run there with the image's ENV, and the HEALTHCHECK command is run as the Dockerfile
 * states it. As root (CI), the processes run as the Dockerfile's USER if this machine has it,
 * otherwise as `nobody`, through util-linux's `setpriv`; as any other user, as that user.
 * What this cannot show: the build itself (apt, `npm ci`), the base image, Docker's volume
 * handling.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOCKERFILE = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8');
/** Generous: a shared 2-core CI machine may be slow to start processes; nothing waits this long. */
const DEADLINE_MS = 120_000;

// --- the Dockerfile, read the way Docker reads it ---------------------------------------------

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

interface Stage {
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

/** Stages of instructions; continuation lines joined, comment and blank lines dropped. */
function parseDockerfile(text: string): Stage[] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*(#.*)?$/.test(line)) continue;
    const continued = /\\\s*$/.test(line);
    pending += `${pending === '' ? '' : ' '}${line.replace(/\\\s*$/, '').trim()}`;
    if (continued) continue;
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(pending) ?? [];
    instructions.push({ keyword: keyword.toUpperCase(), args });
    pending = '';
  }
  const stages: { name: string | undefined; instructions: Instruction[] }[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const name = /\sAS\s+(\S+)$/i.exec(instruction.args)?.[1];
      stages.push({ name, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

const stages = parseDockerfile(DOCKERFILE);
const runtime = stages.at(-1)!;
const all = (stage: Stage, keyword: string) =>
  stage.instructions.filter((instruction) => instruction.keyword === keyword);
/** The value of the last such instruction of a stage (the one in effect), or ''. */
const last = (stage: Stage, keyword: string) => all(stage, keyword).at(-1)?.args ?? '';
/** Exec form (a JSON array) or shell form, as Docker runs CMD, ENTRYPOINT and HEALTHCHECK. */
const commandOf = (args: string): string[] =>
  args.startsWith('[') ? (JSON.parse(args) as string[]) : ['/bin/sh', '-c', args];

const WORKDIR = last(runtime, 'WORKDIR');
const USER = last(runtime, 'USER');
const VOLUMES = all(runtime, 'VOLUME').flatMap(({ args }) =>
  args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/),
);
/** ENV key=value pairs (the image uses no quoting). */
const IMAGE_ENV: Record<string, string> = Object.fromEntries(
  all(runtime, 'ENV').flatMap(({ args }) =>
    args
      .split(/\s+/)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  ),
);
const ENTRY = [...commandOf(last(runtime, 'ENTRYPOINT')), ...commandOf(last(runtime, 'CMD'))];
const HEALTHCHECK = /^((?:--\S+\s+)*)CMD\s+(.+)$/.exec(last(runtime, 'HEALTHCHECK'));
const HEALTHCHECK_OPTIONS = HEALTHCHECK?.[1]?.trim().split(/\s+/) ?? [];
const HEALTHCHECK_COMMAND = commandOf(HEALTHCHECK?.[2] ?? '');
/** Where the default store lives in the image: DATABASE_URL resolved against WORKDIR. */
const DEFAULT_DATABASE = posix.resolve(
  WORKDIR,
  loadConfig(IMAGE_ENV).databaseUrl.slice('sqlite:'.length),
);

// --- the user that runs the entry point, and the replayed tree ----------------------------------

const isRoot = process.getuid?.() === 0;

function idOf(name: string): { uid: number; gid: number } | undefined {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** As root: the image's USER where this machine has it, else `nobody`. Otherwise: ourselves. */
const runAs = isRoot
  ? (idOf(USER) ?? idOf('nobody'))
  : { uid: process.getuid?.() ?? -1, gid: process.getgid?.() ?? -1 };

/** `node` is the image's node; a program run as the entry point's user, as Docker does. */
function asUser(command: readonly string[]): string[] {
  const argv = command.map((arg, index) =>
    index === 0 && arg === 'node' ? process.execPath : arg,
  );
  if (!isRoot) return argv;
  return [
    'setpriv',
    `--reuid=${runAs!.uid}`,
    `--regid=${runAs!.gid}`,
    '--init-groups',
    '--',
    ...argv,
  ];
}

/**
 * The installed production dependencies, as `npm prune --omit=dev` leaves `node_modules`: the
 * lockfile's packages not marked dev. Not `npm ls --omit=dev`, which lists the dev packages too
 * when `node_modules` is a symlink (a worktree sharing another checkout's).
 */
function productionPackages(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  const paths = Object.entries(lock.packages)
    .filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev !== true)
    .map(([path]) => path)
    // A package nested in another's node_modules comes with its parent; an optional one for
    // another platform is not installed.
    .filter((path) => path.split('node_modules/').length === 2 && existsSync(join(ROOT, path)));
  if (paths.length === 0) throw new Error('package-lock.json lists no production packages');
  return paths;
}

/** Clears (or restores) every write bit below `path`, symlinks left alone. */
function setWritable(path: string, writable: boolean): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    for (const entry of readdirSync(path)) setWritable(join(path, entry), writable);
  }
  chmodSync(path, writable ? stat.mode | 0o200 : stat.mode & ~0o222);
}

/**
 * The runtime stage's COPY lines into `app`. The build stage's WORKDIR holds the repository's
 * files plus what `npm ci` made there (dist/, node_modules/), so its paths map to ROOT.
 */
function copyRuntimeTree(app: string): void {
  const workdirOf = new Map(stages.map((stage) => [stage.name, last(stage, 'WORKDIR')]));
  for (const { args } of all(runtime, 'COPY')) {
    const words = args.split(/\s+/);
    const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
    const paths = words.filter((word) => !word.startsWith('--'));
    const destination = paths.pop()!;
    const intoDirectory = paths.length > 1 || destination.endsWith('/');
    for (const source of paths) {
      const inRepository =
        from === undefined ? source : posix.relative(workdirOf.get(from)!, source);
      const inImage = posix.resolve(
        WORKDIR,
        intoDirectory ? posix.join(destination, posix.basename(source)) : destination,
      );
      const target = join(app, posix.relative(WORKDIR, inImage));
      if (inRepository === 'node_modules') {
        for (const pkg of productionPackages()) {
          cpSync(join(ROOT, pkg), join(target, pkg.slice('node_modules/'.length)), {
            recursive: true,
          });
        }
      } else {
        expect(existsSync(join(ROOT, inRepository)), `${inRepository} (npm run build?)`).toBe(true);
        cpSync(join(ROOT, inRepository), target, { recursive: true });
      }
    }
  }
}

// --- processes ---------------------------------------------------------------------------------

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const children = new Set<ChildProcess>();

function start(command: readonly string[], cwd: string, env: Record<string, string>) {
  const [program, ...args] = asUser(command);
  const child = spawn(program!, args, {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<Result>((resolve) => {
    const done = (code: number | null) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    };
    child.once('exit', (code) => done(code)).once('error', () => done(null));
  });
  return { child, exited, output: () => ({ stdout, stderr }) };
}

type Started = ReturnType<typeof start>;

/** Runs a command to its end (a bound only so that a hung one fails the test instead of hanging). */
const run = (command: readonly string[], cwd: string, env: Record<string, string>) => {
  const started = start(command, cwd, env);
  const timer = setTimeout(() => started.child.kill('SIGKILL'), DEADLINE_MS);
  return started.exited.finally(() => clearTimeout(timer));
};

/** Polls until `check` returns a value, the process has exited, or the deadline passes. */
async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  running: Started,
): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  let exited = false;
  void running.exited.then(() => (exited = true));
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    const { stdout, stderr } = running.output();
    if (exited) throw new Error(`exited before ${what}:\n${stdout}\n${stderr}`);
    if (Date.now() > deadline)
      throw new Error(`no ${what} in ${DEADLINE_MS} ms:\n${stdout}\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The URL of the `gridco2 serving` log line. */
const servingUrl = (running: Started) =>
  waitFor(
    'gridco2 serving line',
    () => /"url":"(http:[^"]+)".*"msg":"gridco2 serving"/.exec(running.output().stdout)?.[1],
    running,
  );

const statusOf = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(15_000) }).then(
    (response) => response.status,
    () => undefined,
  );

// --- the tests ------------------------------------------------------------------------------------

let dir = '';
let app = '';
/** The environment of the container, with what a test on a shared machine must change. */
let env: Record<string, string> = {};

beforeAll(() => {
  expect(runAs, 'a non-root user to run as (the image USER, or nobody)').toBeDefined();
  dir = mkdtempSync(join(tmpdir(), 'gridco2-container-'));
  chmodSync(dir, 0o755); // the user must reach the tree
  app = join(dir, 'app');
  mkdirSync(app);
  copyRuntimeTree(app);
  // The runtime stage's RUN (checked below): each VOLUME directory, owned by USER; the only
  // writable place.
  const volumes = VOLUMES.map((volume) => join(app, posix.relative(WORKDIR, volume)));
  for (const data of volumes) mkdirSync(data, { recursive: true });
  setWritable(app, false);
  for (const data of volumes) {
    chmodSync(data, 0o755);
    if (isRoot) chownSync(data, runAs!.uid, runAs!.gid);
  }
  // Loopback only, any free port, and no ingestion (it would reach the real upstreams).
  env = { ...IMAGE_ENV, HOST: '127.0.0.1', PORT: '0', INGEST: 'off' };
  const [program, ...args] = asUser(['node', '-e', '0']);
  const probe = spawnSync(program!, args, { encoding: 'utf8' });
  expect(probe.status, `${process.execPath} as uid ${runAs!.uid}: ${probe.stderr}`).toBe(0);
});

afterAll(async () => {
  const running = [...children];
  for (const child of running) child.kill('SIGKILL');
  await Promise.all(running.map((child) => new Promise((resolve) => child.once('exit', resolve))));
  if (dir !== '') {
    setWritable(dir, true);
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('deploy/Dockerfile', () => {
  it('runs as a non-root user, with the default store in a declared volume', () => {
    expect(USER).not.toMatch(/^(|root|0)(:.*)?$/);
    expect(WORKDIR).toBe('/app');
    expect(VOLUMES).toEqual([posix.dirname(DEFAULT_DATABASE)]);
    expect(DEFAULT_DATABASE).toBe('/app/data/gridco2.db');
    // The one RUN of the runtime stage makes that directory and hands it to USER; nothing else
    // runs there (a new RUN must be replayed in this test too).
    const runs = all(runtime, 'RUN').map(({ args }) => args);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatch(new RegExp(`chown ${USER}(:${USER})? ${VOLUMES[0]}$`));
    expect(ENTRY).toEqual(['node', 'bin/gridco2.js', 'serve']);
  });

  it('checks health with node itself, bounded in time', () => {
    expect(HEALTHCHECK, 'a HEALTHCHECK [options] CMD line').not.toBeNull();
    expect(HEALTHCHECK_COMMAND[0]).toBe('node');
    expect(HEALTHCHECK_OPTIONS.some((option) => /^--timeout=\d+s$/.test(option))).toBe(true);
  });

  it('builds from the repository alone: every build-context COPY source exists and is sent', () => {
    const ignore = readFileSync(join(ROOT, 'deploy/Dockerfile.dockerignore'), 'utf8');
    const included = new Set(
      ignore
        .split('\n')
        .filter((line) => line.startsWith('!'))
        .map((line) => line.slice(1).trim()),
    );
    const sources = stages.flatMap((stage) =>
      all(stage, 'COPY')
        .filter(({ args }) => !args.includes('--from='))
        .flatMap(({ args }) =>
          args
            .split(/\s+/)
            .filter((word) => !word.startsWith('--'))
            .slice(0, -1),
        ),
    );
    expect(sources).toContain('.npmrc'); // engine-strict applies to `npm ci`
    for (const source of sources) {
      expect(existsSync(join(ROOT, source)), source).toBe(true);
      expect(included, `${source} in Dockerfile.dockerignore`).toContain(source.replace(/\/$/, ''));
    }
  });
});

// Side by side: each test mostly waits for its own processes (its own port, its own file in the
// volume or its own view of the tree), so none waits for another's.
describe.concurrent(
  'the image replayed: a read-only tree with only the data volume writable',
  () => {
    it('serves, creates the default store in the volume, and passes its HEALTHCHECK until stopped', async () => {
      const server = start(ENTRY, app, env);
      const url = await servingUrl(server);
      await waitFor(
        '/v1/health 200',
        async () => ((await statusOf(`${url}/v1/health`)) === 200 ? true : undefined),
        server,
      );
      expect(await statusOf(`${url}/v1/zones`)).toBe(200);
      // Made by the user the entry point ran as, in the volume.
      expect(statSync(join(app, posix.relative(WORKDIR, DEFAULT_DATABASE))).uid).toBe(runAs!.uid);

      // The container's environment, PORT being the port the server took.
      const healthEnv = { ...IMAGE_ENV, PORT: new URL(url).port };
      const healthy = await run(HEALTHCHECK_COMMAND, app, healthEnv);
      expect(healthy.code, healthy.stderr).toBe(0);

      server.child.kill('SIGTERM'); // docker stop
      expect((await server.exited).code).toBe(0);
      const unhealthy = await run(HEALTHCHECK_COMMAND, app, healthEnv);
      expect(unhealthy.code).not.toBe(0);
      expect(unhealthy.code).not.toBeNull();
    });

    it('runs the demo (`docker run ... gridco2 demo`), writing data/demo.db in the volume', async () => {
      // The limit raised only so that polling for the first data is never answered 429.
      const demo = start([...ENTRY.slice(0, -1), 'demo', '--days', '1'], app, {
        ...env,
        RATE_LIMIT_PER_MINUTE: '1000000',
      });
      const url = await servingUrl(demo);
      // Served once the first pass has stored it and the in-memory copy has caught up.
      await waitFor(
        'DE data',
        async () =>
          (await statusOf(`${url}/v1/intensity/latest?zone=DE`)) === 200 ? true : undefined,
        demo,
      );
      expect(existsSync(join(app, 'data', 'demo.db'))).toBe(true);
      demo.child.kill('SIGTERM');
      expect((await demo.exited).code).toBe(0);
    });

    // Not mkdir's "EACCES: permission denied, mkdir 'data'" or SQLite's "unable to open database
    // file": the line names the file, the folder to make writable and the setting to change.
    it.each([
      [
        'there is no data directory',
        false,
        'does not exist and cannot be created (EACCES); create it, writable by this user',
      ],
      [
        'the data directory is not writable by the user',
        true,
        'is not writable by this user; make it writable',
      ],
    ])('refuses to start, in one line without a stack, when %s', async (_, withData, problem) => {
      // The same read-only tree (linked), with a data directory the user cannot write, or none.
      // As root, the directory belongs to root; otherwise, to the user, without write permission.
      const view = mkdtempSync(join(dir, 'view-'));
      for (const entry of readdirSync(app).filter((name) => name !== 'data')) {
        symlinkSync(join(app, entry), join(view, entry));
      }
      if (withData) mkdirSync(join(view, 'data'), 0o555);
      chmodSync(view, 0o555);
      const result = await run(ENTRY, view, env);
      expect(result.code).toBe(1);
      const { databaseUrl } = loadConfig(env);
      const file = join(view, databaseUrl.slice('sqlite:'.length));
      expect(result.stderr).toBe(
        `gridco2: error: cannot open the SQLite file ${file} (DATABASE_URL=${databaseUrl}): ` +
          `its folder ${dirname(file)} ${problem}, or point DATABASE_URL elsewhere\n`,
      );
      expect(result.stdout).toBe('');
    });
  },
);

describe('deploy/example.env', () => {
  it('sets only variables that compose.yaml reads', () => {
    const compose = readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8');
    const names = readFileSync(join(ROOT, 'deploy/example.env'), 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => line.slice(0, line.indexOf('=')));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(compose, name).toContain(`\${${name}`);
  });
});
