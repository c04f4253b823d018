// functions_deploy's form (a new function, or a new version of one: the same name updates it) and the function's
// variables (names only; values are write-only).
import { functions, TRIGGERS, type FunctionDetail, type Trigger, type TriggerType } from '../../../api/functions.ts';
import { Field, Form, RowAction, Select, Table, TextArea, text } from '../../../ui.tsx';

const EXAMPLE = `export default async (req: Request) => {
  const body = req.method === 'POST' ? await req.json() : null;
  console.log('called with', JSON.stringify(body));
  return Response.json({ hello: body?.name ?? 'world' });
};`;

/** The trigger as functions_deploy takes it: a cron needs its schedule, a websocket function its event. */
function triggerOf(d: FormData): Trigger {
  const type = (text(d, 'trigger') ?? 'http') as TriggerType;
  if (type === 'cron') return { type, config: { schedule: text(d, 'schedule') ?? '' } };
  if (type === 'websocket') return { type, config: { event: text(d, 'event') ?? '' } };
  return { type: 'http', config: {} };
}

const configText = (fn: FunctionDetail | undefined, key: string): string | undefined => {
  const v = fn?.trigger.config[key];
  return typeof v === 'string' ? v : undefined;
};

export function DeployForm({ appId, fn, onDeployed }: { appId: string; fn?: FunctionDetail; onDeployed: (name: string) => Promise<unknown> | void }) {
  const deploy = async (d: FormData) => {
    const name = fn?.name ?? text(d, 'name') ?? '';
    const code = d.get('code');
    await functions.deploy(appId, { name, code: typeof code === 'string' ? code : '', description: text(d, 'description'), trigger: triggerOf(d) });
    await onDeployed(name);
  };
  return (
    <Form label={fn ? `Deploy a new version of ${fn.name}` : 'Deploy a new function'} button={fn ? 'Deploy version' : 'Deploy function'} submit={deploy}>
      {!fn && <Field label="Name" name="name" required pattern="[A-Za-z0-9_\-]{1,100}" maxLength={100} />}
      <Field label="Description" name="description" maxLength={2000} defaultValue={fn?.description} />
      <TextArea label="Code" name="code" required rows={12} defaultValue={fn?.code ?? EXAMPLE} />
      <div class="row">
        <Select label="Trigger" name="trigger" options={TRIGGERS} initial={fn?.trigger.type ?? 'http'} />
        <Field label="Cron schedule (cron)" name="schedule" placeholder="*/5 * * * *" defaultValue={configText(fn, 'schedule')} />
        <Field label="Event (websocket)" name="event" defaultValue={configText(fn, 'event')} />
      </div>
    </Form>
  );
}

export function EnvVars({ appId, fn, canWrite, changed }: { appId: string; fn: FunctionDetail; canWrite: boolean; changed: () => Promise<void> }) {
  const set = async (d: FormData) => {
    await functions.setEnv(appId, fn.name, { [text(d, 'env_name') ?? '']: String(d.get('env_value') ?? '') });
    await changed();
  };
  return (
    <>
      <h3>Variables</h3>
      {fn.env_var_names.length === 0 ? (
        <p class="muted">No variables.</p>
      ) : (
        <Table caption={`Variables of ${fn.name}`} columns={['Name', ...(canWrite ? ['Actions'] : [])]}>
          {fn.env_var_names.map((n) => (
            <tr key={n}>
              <td>
                <code>{n}</code>
              </td>
              {canWrite && (
                <RowAction label={`Remove variable ${n}`} confirm={`Remove the variable ${n}?`} act={() => functions.setEnv(appId, fn.name, { [n]: null }).then(changed)}>
                  Remove
                </RowAction>
              )}
            </tr>
          ))}
        </Table>
      )}
      {canWrite && (
        <Form label="Set a variable" button="Set variable" inline submit={set}>
          <Field label="Variable name" name="env_name" required pattern="[A-Za-z_][A-Za-z0-9_]*" maxLength={200} />
          <Field label="Value (write-only)" name="env_value" type="password" autocomplete="off" />
        </Form>
      )}
    </>
  );
}
