import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { CLI } from './built-cli.js';

/**
 * Real `gridco2 serve` processes for multi-instance suites. They run the build as a user does
 * (test/support/built-cli.ts), and each is one process, so a signal reaches the server itself. Every child is tracked from the moment it is spawned: `killAll` ends them all, even
 * those whose start failed halfway.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** One JSON line of the server's pino log (non-JSON output is kept as `{ msg }`). */
export interface LogLine {
  readonly msg: string;
  readonly [field: string]: unknown;
}

export interface ServeProcess {
  readonly name: string;
  readonly pid: number;
  /** Read from the `gridco2 serving` log line. */
  readonly url: string;
  readonly logs: readonly LogLine[];
  alive(): boolean;
  /** The first log line (already written or to come) that matches, or a rejection after `timeoutMs`. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs: number): Promise<LogLine>;
  /** Sends `signal` and waits for the process to exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

function parseLine(text: string): LogLine {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'msg' in parsed) return parsed as LogLine;
  } catch {
    // A line that is not JSON (a warning printed by a library) is kept as it is.
  }
  return { msg: text };
}

export class ServeProcesses {
  private readonly children = new Set<ChildProcess>();

  /**
   * Starts `gridco2 serve` (or the command in `args`, `demo` say, run in `cwd`) with exactly
   * `env` (plus PATH) and waits until it listens.
   */
  async start(
    name: string,
    env: Readonly<Record<string, string>>,
    { args = ['serve'], cwd = ROOT }: { args?: readonly string[]; cwd?: string } = {},
  ): Promise<ServeProcess> {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.add(child);
    const logs: LogLine[] = [];
    const lines = new EventEmitter();
    let stderr = '';
    let partial = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const part of parts.filter((text) => text.trim() !== '')) {
        const line = parseLine(part);
        logs.push(line);
        lines.emit('line', line);
      }
    });
    child.stderr!.on(
      'data',
      (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)),
    );
    // A spawn failure emits 'error' and never 'exit'.
    const exited = new Promise<void>((resolve) =>
      child.once('exit', resolve).once('error', resolve),
    );
    void exited.then(() => lines.emit('exit'));

    const waitForLog = (match: (line: LogLine) => boolean, timeoutMs: number) =>
      new Promise<LogLine>((resolve, reject) => {
        const found = logs.find(match);
        if (found) return resolve(found);
        const finish = (error?: Error, line?: LogLine) => {
          clearTimeout(timer);
          lines.off('line', onLine).off('exit', onExit);
          if (error) reject(error);
          else resolve(line!);
        };
        const onLine = (line: LogLine) => {
          if (match(line)) finish(undefined, line);
        };
        const onExit = () =>
          finish(new Error(`${name} exited (${child.signalCode ?? child.exitCode}): ${stderr}`));
        const timer = setTimeout(
          () => finish(new Error(`${name}: no matching log line in ${timeoutMs} ms`)),
          timeoutMs,
        );
        lines.on('line', onLine).on('exit', onExit);
        if (hasExited(child)) onExit();
      });

    // A safety net, not a measure: a process that fails to start exits, which ends the wait at
    // once; one that starts can take long on a busy machine.
    const serving = await waitForLog((line) => line.msg === 'gridco2 serving', 120_000);
    return {
      name,
      pid: child.pid!,
      url: String(serving['url']),
      logs,
      alive: () => !hasExited(child),
      waitForLog,
      kill: async (signal) => {
        if (hasExited(child)) return;
        child.kill(signal);
        await exited;
      },
    };
  }

  /** SIGKILLs every child still running and waits until each has exited. */
  async killAll(): Promise<void> {
    const running = [...this.children].filter(
      (child) => child.pid !== undefined && !hasExited(child),
    );
    const exits = running.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of running) child.kill('SIGKILL');
    await Promise.all(exits);
  }
}
