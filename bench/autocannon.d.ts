// The slice of autocannon's untyped API that bench/load.ts uses.
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p99: number;
    [percentile: string]: number;
  }
  export interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** host:port of the connection's target (autocannon's defaults, handed to setupRequest). */
    host?: string;
    [key: string]: unknown;
  }
  interface Request extends RequestParams {
    /** Called before every request built from this entry; returns the request to send. In workers mode: the absolute path of a module whose export is that function. */
    setupRequest?: ((req: RequestParams, context: Record<string, unknown>) => RequestParams) | string;
  }
  interface Options {
    /** Several URLs: connection i goes to url[i % url.length]. */
    url: string | string[];
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    idReplacement?: boolean;
    requests?: Request[];
    /** A function, or in workers mode the absolute path of a module whose export is that function. */
    verifyBody?: ((body: string) => boolean) | string;
    /** Worker threads that send the requests, the connections split among them. */
    workers?: number;
  }
  interface Result {
    latency: Histogram;
    requests: Histogram & { total: number; sent: number };
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
