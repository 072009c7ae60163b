import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The import graphs of src/ and of the dashboard's web/src/ (type imports included) have no
 * cycle outside the simulator, whose local cycle (faults.ts and upstreams.ts) is accepted in a
 * development tool (docs/architecture.md).
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');
const WEB = join(ROOT, 'web/src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'/g;

function graph(root: string): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const file of sources(root)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((match) =>
      resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')),
    );
    edges.set(file, targets);
  }
  return edges;
}

/** Strongly connected components of more than one file, or a file importing itself (Tarjan). */
function cycles(edges: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!edges.has(next)) continue;
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!));
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(relative(ROOT, member));
      } while (member !== node);
      if (component.length > 1 || (edges.get(node) ?? []).includes(node)) found.push(component);
    }
  };
  for (const node of edges.keys()) if (!indices.has(node)) visit(node);
  return found;
}

describe('the import graph', () => {
  it('reads every source file', () => {
    expect(graph(SRC).size).toBeGreaterThan(100);
    expect(graph(WEB).size).toBeGreaterThan(5);
  });

  it('has no cycle outside the simulator', () => {
    const outside = cycles(graph(SRC)).filter(
      (component) => !component.every((file) => file.startsWith('src/simulator/')),
    );
    expect(outside).toEqual([]);
  });

  it('has no cycle in the dashboard', () => {
    expect(cycles(graph(WEB))).toEqual([]);
  });
});
