// A real OpenID provider for Clarify's sign-in tests (issue 49 item 3):
// panva's oidc-provider (a certified implementation), with Clarify's client,
// a second client ("other-client"), PKCE required, and its development
// interactions, which sign in any login with any password (the login becomes
// `sub` and `preferred_username`). It binds 127.0.0.1:0 first, then prints its
// issuer URL on stdout as one line, and serves until killed.
//
// Environment:
//   OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI  Clarify's client.
//   OIDC_ID_TOKEN_AUDIENCE  a provider gone wrong: ID tokens are made for this
//     other client (signed with the real keys), to test that Clarify refuses
//     a token for another audience.
//   OIDC_STALE_KEYS=first  the first read of the keys (Clarify's discovery)
//     lists only a key the provider no longer signs with, as if it rotated its
//     keys right after: Clarify must fetch them again to sign anyone in.
//   OIDC_STALE_KEYS=always  every read lists only that key: tokens name a key
//     Clarify never finds. GET /test/jwks-reads says how often they were read.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

// Stdout carries the issuer line alone: whoever reads it may stop reading,
// and the provider's own notices would then fail to write.
console.log = console.error;
console.info = console.error;
process.stdout.on('error', () => {});

const need = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const clientId = need('OIDC_CLIENT_ID');
const clientSecret = need('OIDC_CLIENT_SECRET');
const redirectUri = need('OIDC_REDIRECT_URI');

const server = http.createServer();
await new Promise((bound) => server.listen(0, '127.0.0.1', bound));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      response_types: ['code'],
      grant_types: ['authorization_code'],
    },
    {
      client_id: 'other-client',
      client_secret: 'other-secret',
      redirect_uris: ['http://127.0.0.1/other'],
      response_types: ['code'],
      grant_types: ['authorization_code'],
    },
  ],
  pkce: { required: () => true },
  // The scopes' claims go into the ID token itself, where Clarify reads them.
  conformIdTokenClaims: false,
  claims: { openid: ['sub'], profile: ['preferred_username'], email: ['email'] },
  findAccount: async (_ctx, id) => ({
    accountId: id,
    claims: async () => ({ sub: id, preferred_username: id, email: `${id}@example.test` }),
  }),
  // Consent is taken as given: the sign-in form is the one step a person takes.
  loadExistingGrant: async (ctx) => {
    const { Grant } = ctx.oidc.provider;
    const known = ctx.oidc.result?.consent?.grantId
      || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (known) return Grant.find(known);
    const grant = new Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid profile email');
    await grant.save();
    return grant;
  },
  features: { devInteractions: { enabled: true } },
  cookies: { keys: [randomUUID()] },
});

const otherAudience = process.env.OIDC_ID_TOKEN_AUDIENCE;
if (otherAudience) {
  const issue = provider.IdToken.prototype.issue;
  provider.IdToken.prototype.issue = async function issueForAnother(options) {
    if (options?.use === 'idtoken') this.client = await provider.Client.find(otherAudience);
    return issue.call(this, options);
  };
}

const handle = provider.callback();
const stale = process.env.OIDC_STALE_KEYS;
let jwksReads = 0;
const retired = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
server.on('request', (req, res) => {
  if (req.method === 'GET' && req.url === '/test/jwks-reads') {
    res.end(String(jwksReads));
    return;
  }
  if (req.method === 'GET' && req.url === '/jwks') {
    jwksReads += 1;
    if (stale === 'always' || (stale === 'first' && jwksReads === 1)) {
      res.setHeader('content-type', 'application/jwk-set+json');
      res.end(JSON.stringify({ keys: [{ ...retired, kid: 'retired', use: 'sig', alg: 'RS256' }] }));
      return;
    }
  }
  handle(req, res);
});
process.stdout.write(`${issuer}\n`);
