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
