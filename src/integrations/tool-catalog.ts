// The vendor's tools per toolkit, kept for a few minutes: listing them is a large answer that rarely changes, and
// every execution needs to know which toolkit a tool belongs to (to check it is enabled and find the connection).
// Vendor failures are thrown as they are (VendorError): the caller maps them for its route.
import { integrationErrors } from './types.ts';
import type { IntegrationsVendor, VendorTool } from './vendor-port.ts';

/** How long this process trusts a toolkit's tool list. */
const TTL_MS = 5 * 60_000;
/** The most tools read per toolkit (the largest toolkits have a few hundred). */
const TOOLS_PER_TOOLKIT = 500;
/** Bound on what is cached, so that listing many toolkits cannot grow the process without limit. */
const MAX_TOOLKITS = 500;
const MAX_SLUGS = 50_000;

export class ToolCatalog {
  readonly #vendor: IntegrationsVendor;
  readonly #lists = new Map<string, { tools: VendorTool[]; until: number }>();
  readonly #toolkitOfSlug = new Map<string, string>();

  constructor(vendor: IntegrationsVendor) {
    this.#vendor = vendor;
  }

  async tools(toolkit: string): Promise<VendorTool[]> {
    const cached = this.#lists.get(toolkit);
    if (cached && cached.until > Date.now()) return cached.tools;
    const tools = await this.#vendor.listTools(toolkit, TOOLS_PER_TOOLKIT);
    if (this.#lists.size >= MAX_TOOLKITS) this.#lists.clear();
    this.#lists.set(toolkit, { tools, until: Date.now() + TTL_MS });
    for (const tool of tools) this.#remember(tool);
    return tools;
  }

  /** The toolkit a tool belongs to, as the vendor says (404 RESOURCE_NOT_FOUND for a tool it does not know). */
  async toolkitOf(slug: string): Promise<string> {
    const known = this.#toolkitOfSlug.get(slug);
    if (known) return known;
    const tool = await this.#vendor.getTool(slug);
    if (!tool) throw integrationErrors.toolNotFound(slug);
    this.#remember(tool);
    return tool.toolkit;
  }

  #remember(tool: VendorTool): void {
    if (this.#toolkitOfSlug.size >= MAX_SLUGS) this.#toolkitOfSlug.clear();
    this.#toolkitOfSlug.set(tool.slug, tool.toolkit);
  }
}
