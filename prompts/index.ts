import { z } from 'zod';

export interface McpPrompt {
  name: string;
  description: string;
  args: z.ZodObject<Record<string, z.ZodType<string | undefined>>>;
  render: (args: Record<string, string | undefined>) => string;
}

/** MCP prompts: starting points an agent's user can pick. */
export const prompts: readonly McpPrompt[] = [
  {
    name: 'create_backend',
    description: 'Create a new app for a product idea and keep its service key safe.',
    args: z.object({ idea: z.string().describe('What the app is for') }),
    render: ({ idea }) =>
      `Create a backend app for: ${idea ?? 'my project'}.\n` +
      '1. Call apps_list to see whether a fitting app already exists.\n' +
      '2. Otherwise call apps_create with a short descriptive name.\n' +
      '3. The response holds service_key.key, shown only once: tell the user to store it as a secret (never in client-side code).\n' +
      '4. Read the svc://guide/llms.txt resource for what the app can do next.',
  },
  {
    name: 'add_user_table',
    description: 'Add a table whose rows belong to end users, then check that users see only their own rows.',
    args: z.object({
      app_id: z.string().describe("The app's id, from apps_list or apps_create"),
      table: z.string().optional().describe('Table name (default notes)'),
    }),
    render: ({ app_id, table = 'notes' }) =>
      `Add a per-user table "${table}" to app ${app_id} and verify row isolation.\n` +
      `1. schema_get { app_id: "${app_id}" } (or read svc://apps/${app_id}/schema) to see the current tables.\n` +
      `2. schema_apply { app_id, dry_run: true, schema: { tables: { ${table}: { access: "user", columns: { id: { type: "uuid", primary: true, default: "gen_random_uuid()" }, ` +
      'user_id: { type: "uuid", nullable: false }, title: { type: "text" }, created_at: { type: "timestamptz", default: "now()" } } } } } }; ' +
      'check the SQL, then the same call without dry_run. References to other per-user tables: add onDelete: "cascade".\n' +
      '3. auth_signup { app_id, email, password } twice (two test users); keep each access_token.\n' +
      `4. data_insert { app_id, table: "${table}", body: { title: "A's note" }, user_token: <A's token> }; user_id is filled from the token. Same for B.\n` +
      `5. data_select { app_id, table: "${table}", user_token: <A's token> } must return only A's row; with B's token only B's; without user_token (your key) both.\n` +
      `6. data_update / data_delete with A's token and query "id=eq.<B's row id>" must change nothing.`,
  },
  {
    name: 'deploy_data_function',
    description: "Deploy a function that reads the caller's rows through ctx.data, invoke it as an end user and read its logs.",
    args: z.object({
      app_id: z.string().describe("The app's id, from apps_list or apps_create"),
      table: z.string().describe('A table with per-user rows (access user), e.g. from the add_user_table prompt'),
    }),
    render: ({ app_id, table }) =>
      `Deploy a function in app ${app_id} that counts the caller's rows of "${table}".\n` +
      `1. functions_deploy { app_id: "${app_id}", name: "count-${table}", code: <below> } (trigger defaults to http). Code:\n` +
      'export default async (req, ctx) => {\n' +
      `  const { data, error, count } = await ctx.data.from("${table}").select("id", { count: true });\n` +
      '  if (error) return Response.json({ error }, { status: 500 });\n' +
      '  console.log("rows", count);\n' +
      '  return Response.json({ user: ctx.user?.id ?? null, count });\n' +
      '};\n' +
      'ctx.data runs as the calling end user (row-level security) when the request carries their token, else as the app (all rows). ' +
      'A 400 FUNCTION_INVALID names the compile error; fix and redeploy.\n' +
      `2. functions_invoke { app_id, name: "count-${table}", user_token: <an access_token from auth_signup or auth_login> }: count is that user's rows only; ` +
      'without user_token it counts all rows.\n' +
      `3. functions_logs { app_id, name: "count-${table}", limit: 5 }: the invocations with their console output; level: "error" shows failures.\n` +
      `4. Read svc://apps/${app_id}/functions to see its url (public, any method).`,
  },
];
