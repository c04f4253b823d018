/**
 * JSON that is already serialized (the data API's rows, built by Postgres). The REST adapter sends the text as
 * is, saving a parse and a re-serialization per request; JSON.stringify (MCP results) embeds the value via toJSON.
 */
export class JsonText {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
