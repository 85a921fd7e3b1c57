// The Account Portal (docs/api.md "Hosted sign-in, consent and device-approval pages"), served by the
// web process outside /v1, one file per page (pages/), declared on the route kernel like every
// other route (page.ts has what they share).
import { consent } from './pages/consent.ts';
import { consentPage, deviceCode, devicePage } from './pages/device.ts';
import { signInFactor } from './pages/sign-in-factor.ts';
import { signIn, signInPage } from './pages/sign-in.ts';
import { signOut } from './pages/sign-out.ts';
import { signUp, signUpPage } from './pages/sign-up.ts';
import { signedIn } from './pages/signed-in.ts';
import { socialStart } from './pages/social.ts';
import { verifyEmail } from './pages/verify-email.ts';

export const portalRoutes = [
  signInPage,
  signIn,
  signInFactor,
  socialStart,
  signedIn,
  signOut,
  signUpPage,
  signUp,
  verifyEmail,
  devicePage,
  consentPage,
  deviceCode,
  consent,
];
