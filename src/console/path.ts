// Where the console is served, on its own so that what links to its pages (the identity mails) need not load its build.
export const CONSOLE_PATH = '/console/';
