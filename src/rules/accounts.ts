/** New accounts created without a name are named after their e-mail address. */

const NAME_MAX = 200;

/** The part of the e-mail before `@`, at most as long as a member name may be. */
export const nameFromEmail = (email: string): string => email.slice(0, email.lastIndexOf('@')).slice(0, NAME_MAX);
