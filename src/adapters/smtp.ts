// The only module that imports nodemailer: the platform's e-mails over SMTP (SVC_SMTP_URL), and end users' e-mails over
// an app's own server (its auth settings' smtp_url).
import { isIP } from 'node:net';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Mail, MailSender } from '../billing/mail-port.ts';

export class SmtpMailer implements MailSender {
  readonly #transport: Transporter;
  readonly #from: string;

  /** `address`: connect there rather than resolving the URL's host again (an app's server, its address checked). */
  constructor(url: string, from: string, address?: string) {
    // Bounded waits: a silent mail server must not hold a worker slot for minutes.
    const { hostname, port, protocol, username, password } = new URL(url);
    this.#transport = nodemailer.createTransport({
      host: address ?? hostname,
      // TLS still checks the certificate against the name (SNI carries names only, never an address).
      ...(isIP(hostname) ? {} : { tls: { servername: hostname } }),
      port: Number(port) || (protocol === 'smtps:' ? 465 : 587),
      secure: protocol === 'smtps:',
      auth: username ? { user: decodeURIComponent(username), pass: decodeURIComponent(password) } : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    this.#from = from;
  }

  async send(mail: Mail): Promise<void> {
    await this.#transport.sendMail({ from: this.#from, to: mail.to, subject: mail.subject, text: mail.text });
  }

  close(): void {
    this.#transport.close();
  }
}
