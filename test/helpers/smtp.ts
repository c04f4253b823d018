// A loopback SMTP server started by a test: the platform's real SMTP adapter sends to it, and the test reads what
// arrived (the vendor is played, the protocol is real).
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The envelope's recipients, comma-separated. */
  to: string;
  /** The whole message as sent: headers, a blank line, the encoded body. */
  body: string;
}

export interface LoopbackSmtp {
  url: string;
  /** Every message received so far, in order. */
  mails: ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtp(): Promise<LoopbackSmtp> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), body: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A received message as a person reads it: its sender, subject and text (quoted-printable or base64 decoded). */
export interface Mail {
  to: string;
  from: string;
  subject: string;
  text: string;
}

export function parseMail({ to, body: raw }: ReceivedMail): Mail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const body = raw.slice(split + 4);
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? Buffer.from(body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8')
      : encoding === 'base64'
        ? Buffer.from(body, 'base64').toString('utf8')
        : body;
  return { to, from: header('From'), subject: header('Subject'), text: text.replace(/\r\n/g, '\n') };
}
