/** A failure of `npm start` whose message already says what to do: printed as it is. */
export class StartError extends Error {}
