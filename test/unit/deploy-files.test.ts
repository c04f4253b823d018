// The deployment files (Dockerfile, deploy/compose.yaml, deploy/helm/svc-platform) checked without Docker or
// Kubernetes, neither of which runs on this machine: the YAML parses, every environment variable they set is one
// src/config.ts reads, the environment each container gets passes loadConfig with the role and port the files
// assume, and the chart renders (through test/helpers/helm-template.ts, a renderer of the subset of Helm's templates
// the chart uses, since no Helm renderer comes from the npm registry) into the objects expected. Not checked here:
// that the image builds, that the containers start, that Kubernetes accepts the objects (no schema validation), and
// that ingress-nginx honours the annotations.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ENVIRONMENT_VARIABLES, loadConfig, type Config } from '../../src/config.ts';
import { hasValuePath, renderChart } from '../helpers/helm-template.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHART_DIR = path.join(ROOT, 'deploy/helm/svc-platform');
const read = (rel: string): string => readFileSync(path.join(ROOT, rel), 'utf8');
const KNOWN = new Set(ENVIRONMENT_VARIABLES);
const DEFAULT_PORT = loadConfig({}).port;

/**
 * What config.ts defaults for one machine but a deployment of separate processes must set: the database is not on
 * localhost, every process needs the same master key, the public URL is not localhost, each container has its role,
 * and files go to S3 (which needs its bucket) because processes on several hosts share no disk for them.
 */
const REQUIRED_IN_DEPLOYMENT = ['DATABASE_URL', 'SVC_MASTER_KEY', 'SVC_BASE_URL', 'SVC_ROLE', 'SVC_STORAGE_BACKEND', 'SVC_S3_BUCKET'];

/** Stand-ins for the secrets the example files leave empty for the operator to fill. */
const SECRET_PLACEHOLDERS: Record<string, string> = {
  SVC_MASTER_KEY: 'ab'.repeat(32),
  DATABASE_URL: 'postgres://postgres:secret@svc-control-rw:5432/svc',
  POSTGRES_PASSWORD: 'secret',
  S3_ACCESS_KEY: 'svc-files',
  S3_SECRET_KEY: 'secret-secret',
};

type Env = Record<string, string>;
type Yaml = Record<string, unknown>;

const asRecord = (v: unknown): Yaml => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Yaml) : {});
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const at = (v: unknown, ...keys: Array<string | number>): unknown => keys.reduce<unknown>((o, k) => (Array.isArray(o) ? o[k as number] : asRecord(o)[k]), v);

/** Kubernetes and Helm read YAML 1.1, where on/off/yes/no are booleans: parse as they do. */
function parseDocuments(source: string, name: string): Yaml[] {
  return parseAllDocuments(source, { version: '1.1' }).flatMap((doc) => {
    if (doc.errors.length) throw new Error(`${name}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJS();
    return value === null ? [] : [asRecord(value)];
  });
}

/** KEY=value lines of an env file (comments and blank lines skipped). */
function parseEnvFile(source: string): Env {
  const env: Env = {};
  for (const line of source.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

/** An empty value filled with its placeholder, as an operator fills the example. */
const filled = (env: Env): Env => Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v || SECRET_PLACEHOLDERS[k] || '']));

function configFor(env: Env): Config {
  return loadConfig(env);
}

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const envNames = [...dockerfile.matchAll(/^ENV\s+([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]!);
  /** What the image holds from the build context, and node_modules from the npm ci stage. */
  const copied = [
    ...[...dockerfile.matchAll(/^COPY\s+(?!--from)(.+)\s+\S+$/gm)].flatMap((m) => m[1]!.split(/\s+/)),
    ...[...dockerfile.matchAll(/^COPY\s+--from=\S+\s+\S+\s+\.\/(\S+)$/gm)].map((m) => m[1]!),
  ];

  it('sets only variables config.ts reads, and runs Node 24 from node_modules as a non-root user on the default port', () => {
    expect(envNames.filter((n) => !KNOWN.has(n))).toEqual([]);
    expect(dockerfile).toMatch(/^CMD \["\/app\/node_modules\/\.bin\/node", "src\/main\.ts"\]$/m);
    expect(dockerfile).toMatch(/^USER svc$/m);
    expect(dockerfile).toMatch(/useradd --uid 10001 /);
    expect(dockerfile).toMatch(/^EXPOSE (\d+)$/m);
    expect(Number(/^EXPOSE (\d+)$/m.exec(dockerfile)![1])).toBe(DEFAULT_PORT);
    expect(dockerfile).toMatch(/test -x node_modules\/@deno\/linux-x64-glibc\/deno/);
  });

  it('copies every top-level folder the copied code imports or reads, and .dockerignore lets exactly those in', () => {
    const reached = new Set<string>();
    for (const dir of copied.filter((c) => c !== 'node_modules' && statSync(path.join(ROOT, c)).isDirectory())) {
      for (const file of sourceFiles(path.join(ROOT, dir))) for (const top of topLevelTargets(file)) reached.add(top);
    }
    expect([...reached].filter((top) => !copied.includes(top)).sort()).toEqual([]);
    const allowed = read('.dockerignore')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    const fromContext = copied.filter((c) => c !== 'node_modules');
    expect(fromContext.filter((c) => !allowed.includes(c)).sort()).toEqual([]);
    expect(allowed.filter((a) => !fromContext.includes(a)).sort()).toEqual([]);
  });

  it('npm ci --omit=dev suffices: the code run or bundled at run time imports only dependencies and optional dependencies', () => {
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const pkg = JSON.parse(read('package.json')) as { dependencies: Env; optionalDependencies: Env };
    const installed = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies)]);
    const imported = new Set<string>();
    for (const dir of ['src', 'tools', 'workers', 'resources', 'prompts', 'db', 'console/src', 'templates']) {
      for (const file of sourceFiles(path.join(ROOT, dir))) for (const name of packageImports(readFileSync(file, 'utf8'))) imported.add(name);
    }
    expect(imported.size).toBeGreaterThan(10);
    expect([...imported].filter((name) => !installed.has(name)).sort()).toEqual([]);
  });
});

describe('deploy/compose.yaml', () => {
  const compose = asRecord(parse(read('deploy/compose.yaml'), { merge: true }));
  const services = asRecord(compose.services);
  const composeVars = filled(parseEnvFile(read('deploy/.env.example')));
  const platformEnv = parseEnvFile(read('deploy/platform.env.example'));

  const environmentOf = (service: string): Env =>
    Object.fromEntries(Object.entries(asRecord(at(services, service, 'environment'))).map(([k, v]) => [k, interpolate(String(v), composeVars)]));
  /** What the container sees: platform.env (filled in), overridden by compose's environment, as compose does. */
  const containerEnv = (service: string): Env => ({ ...filled(platformEnv), ...environmentOf(service) });

  it('has PostgreSQL with pgvector, an S3 store with its bucket created, and api and worker from the one image', () => {
    expect(String(at(services, 'postgres', 'image'))).toMatch(/^pgvector\/pgvector:pg1[5-9]$/);
    expect(at(services, 'bucket', 'command')).toEqual([expect.stringContaining('mc mb --ignore-existing')]);
    expect(at(services, 'api', 'image')).toBe(at(services, 'worker', 'image'));
    expect(at(services, 'api', 'build', 'dockerfile')).toBe('Dockerfile');
    for (const role of ['api', 'worker']) {
      expect(at(services, role, 'depends_on', 'postgres', 'condition')).toBe('service_healthy');
      expect(at(services, role, 'depends_on', 'bucket', 'condition')).toBe('service_completed_successfully');
    }
  });

  it('sets only variables config.ts reads, and every variable a deployment needs', () => {
    for (const role of ['api', 'worker']) {
      const names = Object.keys(containerEnv(role));
      expect(names.filter((n) => !KNOWN.has(n))).toEqual([]);
      expect(REQUIRED_IN_DEPLOYMENT.filter((n) => !names.includes(n))).toEqual([]);
    }
  });

  it('gives each container an environment loadConfig accepts, with its role, the port it publishes and the bucket created', () => {
    for (const role of ['api', 'worker'] as const) {
      const config = configFor(containerEnv(role));
      expect(config.role).toBe(role);
      expect(config.storage.backend).toBe('s3');
      expect(config.storage.s3.bucket).toBe(interpolate(String(at(services, 'bucket', 'environment', 'BUCKET')), composeVars));
    }
    const api = configFor(containerEnv('api'));
    expect(String(at(services, 'api', 'ports', 0))).toMatch(new RegExp(`:${api.port}$`));
    expect(asList(at(services, 'api', 'healthcheck', 'test')).join(' ')).toContain(`http://127.0.0.1:${api.port}/health/ready`);
    expect(at(services, 'worker', 'healthcheck')).toBeUndefined();
  });

  it('shares the image data directory between api and worker on a read-only root, and gives the api longer than its shutdown timeout to stop', () => {
    const dataDir = /^ENV SVC_DATA_DIR=(\S+)$/m.exec(read('Dockerfile'))![1];
    expect(at(services, 'api', 'volumes')).toEqual([`platform-data:${dataDir}`]);
    expect(at(services, 'worker', 'volumes')).toEqual([`platform-data:${dataDir}`]);
    for (const role of ['api', 'worker']) expect([at(services, role, 'read_only'), at(services, role, 'tmpfs')]).toEqual([true, ['/tmp']]);
    const grace = Number(/^(\d+)s$/.exec(String(at(services, 'api', 'stop_grace_period')))![1]);
    expect(grace * 1000).toBeGreaterThan(configFor(containerEnv('api')).shutdownTimeoutMs);
  });

  it('documents in .env.example every variable compose.yaml interpolates', () => {
    const used = [...read('deploy/compose.yaml').matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
    expect([...new Set(used)].filter((n) => !(n in composeVars))).toEqual([]);
  });
});

describe('deploy/helm/svc-platform', () => {
  const values = asRecord(parse(read('deploy/helm/svc-platform/values.yaml'), { version: '1.1' }));
  const secretKeys = Object.keys(asRecord(at(values, 'secrets', 'env')));
  const defaults = renderChart(CHART_DIR);
  const objects = (files: Map<string, string>): Yaml[] => [...files].flatMap(([name, text]) => parseDocuments(text, name));
  const find = (docs: Yaml[], kind: string, component?: string): Yaml => {
    const found = docs.find((d) => d.kind === kind && (!component || at(d, 'metadata', 'labels', 'app.kubernetes.io/component') === component));
    if (!found) throw new Error(`no ${kind} ${component ?? ''}`);
    return found;
  };
  const container = (deployment: Yaml): Yaml => asRecord(at(deployment, 'spec', 'template', 'spec', 'containers', 0));
  /** A container's environment: its env entries, the ConfigMap, and the Secret's keys (placeholders where empty). */
  const podEnv = (docs: Yaml[], deployment: Yaml): Env => {
    const configMap = asRecord(at(find(docs, 'ConfigMap'), 'data')) as Env;
    const secret = filled(Object.fromEntries(secretKeys.map((k) => [k, String(at(values, 'secrets', 'env', k) ?? '')])));
    const direct = Object.fromEntries(asList(container(deployment).env).map((e) => [String(at(e, 'name')), String(at(e, 'value'))]));
    return { ...secret, ...configMap, ...direct };
  };

  it('Chart.yaml, values.yaml and the CloudNativePG example parse; the example is a Cluster with superuser access', () => {
    expect(parseDocuments(read('deploy/helm/svc-platform/Chart.yaml'), 'Chart.yaml')[0]).toMatchObject({ apiVersion: 'v2', name: 'svc-platform' });
    const clusters = parseDocuments(read('deploy/helm/svc-platform/examples/cnpg-cluster.yaml'), 'cnpg-cluster.yaml');
    expect(clusters.length).toBeGreaterThan(1);
    for (const c of clusters) expect(c).toMatchObject({ apiVersion: 'postgresql.cnpg.io/v1', kind: 'Cluster', spec: { enableSuperuserAccess: true } });
  });

  it('every .Values path the templates use exists in values.yaml', () => {
    expect(defaults.valuePaths.length).toBeGreaterThan(20);
    expect(defaults.valuePaths.filter((p) => !hasValuePath(values, p))).toEqual([]);
  });

  it('renders with its default values into parseable YAML of the expected kinds', () => {
    const kinds = objects(defaults.files).map((d) => `${String(d.kind)}/${String(at(d, 'metadata', 'name'))}`);
    expect(kinds.sort()).toEqual(
      [
        'ConfigMap/svc-svc-platform',
        'Deployment/svc-svc-platform-api',
        'Deployment/svc-svc-platform-worker',
        'HorizontalPodAutoscaler/svc-svc-platform-api',
        'Ingress/svc-svc-platform-api',
        'PersistentVolumeClaim/svc-svc-platform-data',
        'Service/svc-svc-platform-api',
      ].sort(),
    );
  });

  it('renders the other branches: a Secret of its own, fixed replicas, no Ingress, an emptyDir; and refuses a Secret without the master key', () => {
    const docs = objects(
      renderChart(CHART_DIR, {
        secrets: { create: true, env: { SVC_MASTER_KEY: SECRET_PLACEHOLDERS.SVC_MASTER_KEY, DATABASE_URL: SECRET_PLACEHOLDERS.DATABASE_URL } },
        persistence: { enabled: false },
        api: { autoscaling: { enabled: false } },
        ingress: { enabled: false },
      }).files,
    );
    expect(docs.map((d) => d.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Deployment', 'Secret', 'Service']);
    const secret = find(docs, 'Secret');
    expect(Object.keys(asRecord(secret.stringData)).sort()).toEqual(['DATABASE_URL', 'SVC_MASTER_KEY']);
    const api = find(docs, 'Deployment', 'api');
    expect(at(api, 'spec', 'replicas')).toBe(at(values, 'api', 'replicas'));
    expect(at(container(api), 'envFrom', 1, 'secretRef', 'name')).toBe(at(secret, 'metadata', 'name'));
    expect(at(api, 'spec', 'template', 'spec', 'volumes', 0)).toEqual({ name: 'data', emptyDir: {} });
    expect(() => renderChart(CHART_DIR, { secrets: { create: true } })).toThrow(/SVC_MASTER_KEY is required/);
  });

  it('sets only variables config.ts reads, every variable a deployment needs, and loadConfig accepts each pod environment with its role', () => {
    const docs = objects(defaults.files);
    for (const role of ['api', 'worker'] as const) {
      const env = podEnv(docs, find(docs, 'Deployment', role));
      expect(Object.keys(env).filter((n) => !KNOWN.has(n))).toEqual([]);
      expect(REQUIRED_IN_DEPLOYMENT.filter((n) => !(n in env))).toEqual([]);
      const config = configFor(env);
      expect(config.role).toBe(role);
      expect(config.storage.s3.bucket).toBe(at(values, 's3', 'bucket'));
    }
  });

  it('the api container, its Service and its probes name the port it listens on, probed on /health and /health/ready', () => {
    const docs = objects(defaults.files);
    const api = find(docs, 'Deployment', 'api');
    const c = container(api);
    const config = configFor(podEnv(docs, api));
    expect(at(c, 'ports', 0)).toEqual({ name: 'http', containerPort: config.port });
    expect(at(find(docs, 'Service', 'api'), 'spec', 'ports', 0, 'targetPort')).toBe('http');
    expect(at(c, 'livenessProbe', 'httpGet')).toEqual({ path: '/health', port: 'http' });
    expect(at(c, 'startupProbe', 'httpGet')).toEqual({ path: '/health', port: 'http' });
    expect(at(c, 'readinessProbe', 'httpGet')).toEqual({ path: '/health/ready', port: 'http' });
    const worker = container(find(docs, 'Deployment', 'worker'));
    expect([worker.ports, worker.livenessProbe, worker.readinessProbe]).toEqual([undefined, undefined, undefined]);
  });

  it('drains on shutdown: the grace period covers the preStop sleep and SVC_SHUTDOWN_TIMEOUT_MS', () => {
    const docs = objects(defaults.files);
    const api = find(docs, 'Deployment', 'api');
    const sleep = asList(at(container(api), 'lifecycle', 'preStop', 'exec', 'command'));
    expect(sleep[0]).toBe('sleep');
    const grace = Number(at(api, 'spec', 'template', 'spec', 'terminationGracePeriodSeconds'));
    expect(grace).toBeGreaterThanOrEqual(Number(sleep[1]) + configFor(podEnv(docs, api)).shutdownTimeoutMs / 1000 + 5);
  });

  it("the Ingress serves the host of SVC_BASE_URL and the apps' hosts under SVC_BASE_DOMAIN to the api Service with long timeouts for websockets, and the HPA scales the api", () => {
    const docs = objects(defaults.files);
    const ingress = find(docs, 'Ingress');
    const config = configFor(podEnv(docs, find(docs, 'Deployment', 'api')));
    expect(asList(at(ingress, 'spec', 'rules')).map((r) => at(r, 'host'))).toEqual([new URL(config.baseUrl).host, `*.${config.baseDomain}`]);
    // Apps' hosts are not the platform's: no app's site shares the console's origin or site.
    expect(config.baseDomain!.endsWith(new URL(config.baseUrl).host.split('.').slice(-2).join('.'))).toBe(false);
    for (const i of [0, 1]) expect(at(ingress, 'spec', 'rules', i, 'http', 'paths', 0, 'backend', 'service', 'name')).toBe(at(find(docs, 'Service'), 'metadata', 'name'));
    const annotations = asRecord(at(ingress, 'metadata', 'annotations'));
    expect(Object.values(annotations).every((v) => typeof v === 'string')).toBe(true);
    expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThan(30);
    expect(at(find(docs, 'HorizontalPodAutoscaler'), 'spec', 'scaleTargetRef', 'name')).toBe(at(find(docs, 'Deployment', 'api'), 'metadata', 'name'));
  });

  it('mounts one claim at the image data directory and an emptyDir at /tmp on a read-only root, as the image user, without service links', () => {
    const docs = objects(defaults.files);
    const dataDir = /^ENV SVC_DATA_DIR=(\S+)$/m.exec(read('Dockerfile'))![1];
    const claim = at(find(docs, 'PersistentVolumeClaim'), 'metadata', 'name');
    for (const role of ['api', 'worker']) {
      const d = find(docs, 'Deployment', role);
      expect(at(d, 'spec', 'template', 'spec', 'enableServiceLinks')).toBe(false);
      expect(at(container(d), 'volumeMounts')).toEqual([{ name: 'data', mountPath: dataDir }, { name: 'tmp', mountPath: '/tmp' }]);
      expect(at(container(d), 'securityContext', 'readOnlyRootFilesystem')).toBe(true);
      expect(at(d, 'spec', 'template', 'spec', 'volumes', 0, 'persistentVolumeClaim', 'claimName')).toBe(claim);
      expect(at(d, 'spec', 'template', 'spec', 'securityContext', 'runAsUser')).toBe(10001);
    }
  });
});

/** compose's ${VAR}, ${VAR:-default} and ${VAR:?error}, and $$ for a literal $. */
function interpolate(text: string, vars: Env): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}/g, (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
    if (whole === '$$') return '$';
    const value = vars[name!];
    if (value) return value;
    if (op === '?') throw new Error(`${name} is unset: ${arg}`);
    return op === '-' ? arg! : '';
  });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|tsx|js|mjs)$/.test(e.name) && !e.parentPath.includes('node_modules'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The repository's top-level entries a file imports relatively or reads through new URL(..., import.meta.url). */
function topLevelTargets(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const specifiers = [...source.matchAll(/(?:from\s+|import\(\s*)'(\.{1,2}\/[^']+)'|new URL\('(\.{1,2}\/[^']*)', import\.meta\.url\)/g)].map((m) => (m[1] ?? m[2])!);
  return specifiers.map((s) => path.relative(ROOT, path.resolve(path.dirname(file), s)).split(path.sep)[0]!).filter((top) => top && !top.startsWith('..'));
}

/** npm packages a source imports at run time (type-only imports are erased and need nothing). */
function packageImports(source: string): string[] {
  const specifiers = [
    ...[...source.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?'([^'.][^']*)'/gm)].map((m) => m[1]!),
    ...[...source.matchAll(/(?:import|require)\(\s*'([^'.][^']*)'\s*\)/g)].map((m) => m[1]!),
  ];
  return specifiers
    .filter((s) => !isBuiltin(s) && !/^(npm|jsr|https?):/.test(s))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
}
