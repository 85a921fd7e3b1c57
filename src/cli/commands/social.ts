// `cairn social-providers list|set|delete` over the HTTP API (secret key). Secrets are read from
// the environment (CAIRN_SOCIAL_CLIENT_SECRET) or a file (--apple-private-key-file), never from
// the command line, where they would land in shell history and `ps`.
import { readFileSync } from 'node:fs';
import { SocialProvidersApi, type SocialProvider, type SocialProviderInput } from '../../sdk/social.ts';
import { CliError, type Register } from '../context.ts';

const line = (p: SocialProvider) =>
  `${p.provider.padEnd(7)} ${p.enabled ? 'enabled ' : 'disabled'} ${p.uses_shared_client ? 'shared client' : `client ${p.client_id ?? ''}`}`;

interface SetOptions {
  env?: string;
  json?: boolean;
  clientId?: string;
  disabled?: boolean;
  appleTeamId?: string;
  appleKeyId?: string;
  applePrivateKeyFile?: string;
  issuer?: string;
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  apiBaseUrl?: string;
}

export const register: Register = (program, ctx) => {
  const api = () => new SocialProvidersApi(ctx.client());
  const cmd = program
    .command('social-providers')
    .description("the environment's social sign-in providers (secret key)");

  cmd
    .command('list')
    .description('list providers; secrets are never shown')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (o: { env?: string; json?: boolean }) => {
      const out = await api().list(ctx.envName(o.env));
      ctx.print(
        out,
        Boolean(o.json),
        (x: typeof out) => x.social_providers.map(line).join('\n') || 'no social providers',
      );
    });

  cmd
    .command('set')
    .description(
      'set up google, github or apple (google without --client-id uses the shared client); the client secret is read from CAIRN_SOCIAL_CLIENT_SECRET',
    )
    .argument('<provider>', 'google, github or apple')
    .option('--env <name>', 'environment name')
    .option('--client-id <id>', 'your own client id')
    .option('--disabled', 'keep it set up but off')
    .option('--apple-team-id <id>', 'Apple Team ID')
    .option('--apple-key-id <id>', 'Apple Key ID')
    .option('--apple-private-key-file <path>', 'the .p8 key file')
    .option('--issuer <url>', 'OIDC issuer override')
    .option('--authorization-endpoint <url>', 'override')
    .option('--token-endpoint <url>', 'override')
    .option('--api-base-url <url>', 'GitHub API override')
    .option('--json', 'print JSON')
    .action(async (provider: string, o: SetOptions) => {
      const secret = process.env.CAIRN_SOCIAL_CLIENT_SECRET || undefined;
      if (o.applePrivateKeyFile && (!o.appleTeamId || !o.appleKeyId))
        throw new CliError('--apple-private-key-file needs --apple-team-id and --apple-key-id');
      const body: SocialProviderInput = {
        enabled: !o.disabled,
        ...(o.clientId ? { client_id: o.clientId } : {}),
        ...(secret ? { client_secret: secret } : {}),
        ...(o.applePrivateKeyFile
          ? {
              apple: {
                team_id: o.appleTeamId!,
                key_id: o.appleKeyId!,
                private_key: readFileSync(o.applePrivateKeyFile, 'utf8'),
              },
            }
          : {}),
        ...(o.issuer ? { issuer: o.issuer } : {}),
        ...(o.authorizationEndpoint ? { authorization_endpoint: o.authorizationEndpoint } : {}),
        ...(o.tokenEndpoint ? { token_endpoint: o.tokenEndpoint } : {}),
        ...(o.apiBaseUrl ? { api_base_url: o.apiBaseUrl } : {}),
      };
      const out = await api().set(ctx.envName(o.env), provider, body);
      ctx.print(out, Boolean(o.json), line);
    });

  cmd
    .command('delete')
    .description('remove a provider; users who signed in with it keep their accounts')
    .argument('<provider>', 'google, github or apple')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (provider: string, o: { env?: string; json?: boolean }) => {
      await api().delete(ctx.envName(o.env), provider);
      ctx.print({ deleted: provider }, Boolean(o.json), () => `removed ${provider}`);
    });
};
