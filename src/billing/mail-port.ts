// What billing e-mails ask of a mail server. Implemented by src/adapters/smtp.ts; the composition root builds it
// from SVC_SMTP_URL and passes it in.

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface MailSender {
  send(mail: Mail): Promise<void>;
}
