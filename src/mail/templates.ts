// The texts of identity mail. Plain text only: nothing to render wrongly, nothing to track.
import type { Mail } from './index.ts';

export function verificationMail(to: string, app: string, link: string): Mail {
  return {
    to,
    subject: `Confirm your email address for ${app}`,
    text: `Someone signed up for ${app} with this address.\n\nTo confirm it was you, open this link within 24 hours:\n\n${link}\n\nIf it was not you, ignore this mail: no account is active until the address is confirmed.\n`,
  };
}

export function alreadyRegisteredMail(to: string, app: string): Mail {
  return {
    to,
    subject: `Sign-up attempt for ${app}`,
    text: `Someone tried to sign up for ${app} with this address, but it already has an account.\n\nIf it was you, sign in instead, or reset your password if you have forgotten it. If it was not you, you can ignore this mail: nothing has changed.\n`,
  };
}

export function breachedPasswordMail(to: string, app: string): Mail {
  return {
    to,
    subject: `Your ${app} account was not created`,
    text: `Someone signed up for ${app} with this address, but the password chosen appears in lists of passwords exposed in data breaches, which attackers try first.\n\nNo account was created. Please sign up again with a different password; a long passphrase you do not use anywhere else works well.\n`,
  };
}

export function passwordResetMail(to: string, app: string, link: string): Mail {
  return {
    to,
    subject: `Reset your ${app} password`,
    text: `Someone asked to reset the password of your ${app} account.\n\nTo choose a new password, open this link within one hour:\n\n${link}\n\nIf it was not you, ignore this mail: your password has not changed.\n`,
  };
}
