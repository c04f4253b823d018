// Meeting bots (being built).
export class MeetingsService {}
