// A test invocation (functions_invoke): method, path, query, headers and a JSON or text body; the answer's status,
// headers, body and console output. Logged with trigger "test".
import { useState } from 'preact/hooks';
import { functions, INVOKE_METHODS, type InvokeRequest, type InvokeResult } from '../../../api/functions.ts';
import { Field, Form, Select, Table, TextArea, text } from '../../../ui.tsx';
import { Facts } from '../../../facts.tsx';
import { pairLines } from '../runtime-ui.tsx';
import { ConsoleOutput } from './logs.tsx';

/** The body as typed: parsed when it is JSON (sent as application/json), else the text as is; none when empty. */
function bodyOf(raw: string | undefined, kind: string | undefined): unknown {
  if (raw === undefined) return undefined;
  if (kind !== 'json') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw new Error('The body is not valid JSON; choose "text" to send it as it is.');
  }
}

function requestOf(d: FormData): InvokeRequest {
  return {
    method: (text(d, 'method') ?? 'GET') as InvokeRequest['method'],
    path: text(d, 'path') ?? '/',
    query: Object.fromEntries(new URLSearchParams(text(d, 'query') ?? '')),
    headers: pairLines(text(d, 'headers'), ':', 'header'),
    body: bodyOf(text(d, 'body'), text(d, 'body_kind')),
  };
}

export function Invoke({ appId, name, invoked }: { appId: string; name: string; invoked: () => Promise<void> }) {
  const [result, setResult] = useState<InvokeResult>();
  const run = async (d: FormData) => {
    setResult(await functions.invoke(appId, name, requestOf(d)));
    await invoked();
  };
  return (
    <>
      <h3>Invoke</h3>
      <Form keep label={`Invoke ${name}`} button="Invoke" submit={run}>
        <div class="row">
          <Select label="Method" name="method" options={INVOKE_METHODS} initial="POST" />
          <Field label="Path" name="path" defaultValue="/" maxLength={2000} />
          <Field label="Query" name="query" placeholder="a=1&b=2" />
        </div>
        <TextArea label="Headers (one per line, Name: value)" name="headers" rows={2} />
        <div class="row">
          <Select label="Body as" name="body_kind" options={['json', 'text']} initial="json" />
        </div>
        <TextArea label="Body" name="body" rows={4} placeholder='{ "name": "Ada" }' />
      </Form>
      {result && <Response result={result} />}
    </>
  );
}

const shown = (r: InvokeResult): string => (r.body_encoding === 'json' ? JSON.stringify(r.body, null, 2) : r.body_encoding === 'none' ? '(no body)' : String(r.body));

function Response({ result: r }: { result: InvokeResult }) {
  return (
    <section aria-label="Response" class="response">
      <h4>Response</h4>
      <Facts
        label="Response status"
        facts={[
          ['Status', String(r.status)],
          ['Duration', `${r.duration_ms} ms`],
          ...(r.error ? [['Error', r.error] as [string, string]] : []),
        ]}
      />
      <Table caption="Response headers" columns={['Header', 'Value']}>
        {Object.entries(r.headers).map(([k, v]) => (
          <tr key={k}>
            <td>{k}</td>
            <td>{v}</td>
          </tr>
        ))}
      </Table>
      <pre class="code" aria-label="Response body" tabIndex={0}>
        {shown(r)}
        {r.truncated && '\n… (cut at 6 MB)'}
      </pre>
      <ConsoleOutput lines={r.console} />
    </section>
  );
}
