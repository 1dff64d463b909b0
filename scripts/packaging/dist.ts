/**
 * Test support for the packaging tests: makes sure dist/ is built and current, then packs the
 * package as `npm pack` would publish it. scripts/test.sh builds once before the tests; a test run
 * on its own builds here. A lock folder keeps one test file from swapping dist/ under another.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Node's environment for processes that must see the package as a user does (no repo-only condition). */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_OPTIONS;
  return env;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function newestMtimeMs(dir: string, include: (path: string) => boolean): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && include(path)) newest = Math.max(newest, (await stat(path)).mtimeMs);
  }
  return newest;
}

async function buildIsCurrent(): Promise<boolean> {
  const built = await stat(join(REPO, 'dist/index.js')).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  if (built === 0) return false;
  const sources = await newestMtimeMs(join(REPO, 'src'), (p) => p.endsWith('.ts') && !p.endsWith('.test.ts'));
  const config = Math.max(
    ...(await Promise.all(
      ['tsconfig.json', 'tsconfig.build.json'].map(async (f) => (await stat(join(REPO, f))).mtimeMs),
    )),
  );
  return built >= Math.max(sources, config);
}

/**
 * Runs `read` with a current dist/: builds it first unless it is newer than every library source.
 * Holds a lock folder meanwhile, so no other test file rebuilds dist/ while `read` packs it.
 */
export async function withDist<T>(read: () => Promise<T>): Promise<T> {
  await mkdir(join(REPO, '.tmp'), { recursive: true });
  const lock = join(REPO, '.tmp/packaging-build.lock');
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || Date.now() > deadline) throw error;
      // A holder killed with -9 never released it: take it over once its process is gone.
      const holder = Number(await readFile(join(lock, 'pid'), 'utf8').catch(() => ''));
      if (holder > 0 && !isAlive(holder)) await rm(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    if (!(await buildIsCurrent())) {
      await run(join(REPO, 'scripts/build.sh'), [], { cwd: REPO, env: userEnv(), maxBuffer: 64 << 20 }).catch(
        (error: Error & { stdout?: string; stderr?: string }) => {
          throw new Error(`npm run build failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`, { cause: error });
        },
      );
    }
    return await read();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

export interface PackResult {
  readonly tarball: string;
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: readonly string[];
}

/** `npm pack` of the repository into `destination` (dist/ must be built: prepack is skipped). */
export async function pack(destination: string): Promise<PackResult> {
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], {
    cwd: REPO,
    env: userEnv(),
    maxBuffer: 64 << 20,
  });
  const [result] = JSON.parse(stdout) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  if (!result) throw new Error(`npm pack printed no result: ${stdout}`);
  return {
    tarball: join(destination, result.filename),
    size: result.size,
    unpackedSize: result.unpackedSize,
    files: result.files.map((f) => f.path),
  };
}

/** The public entry points, from package.json `exports` (the one place they are defined). */
export async function entryPoints(packageJsonPath = join(REPO, 'package.json')): Promise<string[]> {
  const manifest = JSON.parse(await readFile(packageJsonPath, 'utf8')) as {
    name: string;
    exports: Record<string, unknown>;
  };
  return Object.keys(manifest.exports)
    .filter((key) => key !== './package.json')
    .map((key) => (key === '.' ? manifest.name : `${manifest.name}/${key.slice(2)}`));
}
