// What the e-mails of people on the platform (address verification, password reset) ask of a mail server. The same
// shape as billing's port, so the composition root hands both areas the one SMTP adapter (src/adapters/smtp.ts),
// without identity importing billing.

export interface PersonMail { to: string; subject: string; text: string }

export interface PersonMailSender { send(mail: PersonMail): Promise<void> }
