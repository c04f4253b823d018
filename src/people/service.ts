// People search (being built).
export class PeopleService {}
