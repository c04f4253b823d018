// What integrations asks of its vendor, in our terms: the toolkit catalog, managed auth configs, connect links and
// connected accounts, tools and their execution. Adapters in src/adapters/ (composio.ts) implement IntegrationsVendor;
// the composition root builds one from the configuration and hands it to IntegrationsService.

/** Why a vendor call produced no usable answer. */
export type VendorFailure =
  | { kind: 'status'; status: number; message: string }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'network'; message: string }
  | { kind: 'malformed'; message: string };

export class VendorError extends Error {
  readonly failure: VendorFailure;

  constructor(failure: VendorFailure) {
    super(failure.kind === 'status' || failure.kind === 'network' || failure.kind === 'malformed' ? failure.message : failure.kind);
    this.failure = failure;
  }
}

export interface VendorToolkit {
  slug: string;
  name: string;
  description: string | null;
  logo: string | null;
}

export interface VendorTool {
  /** e.g. GMAIL_SEND_EMAIL */
  slug: string;
  name: string;
  description: string;
  toolkit: string;
  /** JSON Schema of the tool's arguments. */
  inputSchema: Record<string, unknown>;
}

/** The vendor's statuses (Composio's: INITIALIZING, INITIATED, ACTIVE, FAILED, EXPIRED, INACTIVE). */
export interface VendorConnectedAccount {
  id: string;
  status: string;
  toolkit: string | null;
  statusReason: string | null;
}

export interface ConnectLink {
  /** The hosted page the end user's browser is sent to. */
  redirectUrl: string;
  /** The connected account the link completes (INITIATED until the user finishes). */
  connectedAccountId: string;
  expiresAt: Date | null;
}

export interface ToolExecution {
  successful: boolean;
  data: unknown;
  /** The tool's own failure message when successful is false. */
  error: string | null;
}

/** The vendor's calls; failures throw VendorError. */
export interface IntegrationsVendor {
  /** The vendor's catalog, filtered by `search` (name, slug or description). */
  listToolkits(search: string | undefined, limit: number): Promise<VendorToolkit[]>;
  /** null when the vendor has no such toolkit. */
  getToolkit(slug: string): Promise<VendorToolkit | null>;
  /** The id of an enabled vendor-managed auth config of the toolkit with this exact name, if one exists. */
  findAuthConfig(toolkit: string, name: string): Promise<string | null>;
  /** An auth config with the vendor's own OAuth app: scopes given replace the default ones the vendor manages. */
  createAuthConfig(toolkit: string, name: string, scopes: readonly string[] | null): Promise<string>;
  /** A hosted connect page for the user, which ends at `callbackUrl`. */
  createConnectLink(input: { authConfigId: string; userId: string; callbackUrl: string }): Promise<ConnectLink>;
  /** null when the vendor has no such account. */
  getConnectedAccount(id: string): Promise<VendorConnectedAccount | null>;
  /** Revokes the user's grant at the vendor; an account already gone is fine. */
  deleteConnectedAccount(id: string): Promise<void>;
  /** The toolkit's tools with their input schemas (one page of up to `limit`). */
  listTools(toolkit: string, limit: number): Promise<VendorTool[]>;
  /** null when the vendor has no such tool. */
  getTool(slug: string): Promise<VendorTool | null>;
  /** A tool that ran and failed answers successful: false and its error; only the vendor's refusals and outages throw. */
  executeTool(slug: string, input: { userId: string; connectedAccountId: string; arguments: Record<string, unknown> }, signal?: AbortSignal): Promise<ToolExecution>;
}
