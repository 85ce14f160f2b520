/**
 * The key policy of the secrets key (lib/constructs/functions.ts): not CDK's default, which gives
 * the account root `kms:*` and so lets any IAM policy of the account allow any use of the key
 * (https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html#key-policy-default-allow-root-enable-iam).
 * The policy names each function role that uses the key, with exactly its actions of
 * SECRETS_KEY_ACCESS and the encryption context of webhook secrets, and the key's administrators
 * (the deployment's CloudFormation role and the operator's `secretsKeyAdmins`), who may manage the
 * key but not use it.
 */
import { ENCRYPTION_CONTEXT } from '../../lambda/core/adapters/data-keys';
import { SECRETS_KEY_ACCESS, type FunctionId } from '../../lib/table-access';
import { defaultStack, synthesize, type Synthesized } from './stack';

interface KeyStatement {
  Effect: string;
  Principal: { AWS: unknown };
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

const CFN_EXEC_ROLE = { 'Fn::Sub': 'arn:${AWS::Partition}:iam::${AWS::AccountId}:role/cdk-hnb659fds-cfn-exec-role-${AWS::AccountId}-${AWS::Region}' };
/** Operations that use the key on data: none of them for an administrator. */
const CRYPTO = /^kms:(Encrypt|Decrypt|ReEncrypt|GenerateDataKey|GenerateMac|VerifyMac|Sign|Verify|DeriveSharedSecret|\*)/;

function keyStatements(s: Synthesized): KeyStatement[] {
  const keys = Object.values(s.template.findResources('AWS::KMS::Key')).filter((k) => /webhook signing secrets/.test(k.Properties.Description));
  expect(keys).toHaveLength(1);
  return keys[0].Properties.KeyPolicy.Statement;
}
const principalsOf = (st: KeyStatement) => [st.Principal.AWS].flat();
const roleOf = (s: Synthesized, id: FunctionId) => ({ 'Fn::GetAtt': [s.logicalId(s.stack.functions.all.get(id)!.role!), 'Arn'] });

describe('the secrets key policy', () => {
  const s = defaultStack();
  const statements = keyStatements(s);

  it('gives the account root nothing and names no wildcard principal', () => {
    for (const st of statements) {
      for (const p of principalsOf(st)) {
        expect(JSON.stringify(p)).not.toMatch(/:root"|^"\*"$/);
      }
      expect([st.Action].flat()).not.toContain('kms:*');
    }
  });

  it('lets each function that uses the key do exactly its SECRETS_KEY_ACCESS actions, with the webhook-secrets encryption context', () => {
    const users = Object.keys(SECRETS_KEY_ACCESS) as FunctionId[];
    for (const id of users) {
      const own = statements.filter((st) => principalsOf(st).some((p) => JSON.stringify(p) === JSON.stringify(roleOf(s, id))));
      expect(own).toHaveLength(1);
      expect({ id, actions: [own[0].Action].flat().sort() }).toEqual({ id, actions: [...SECRETS_KEY_ACCESS[id]!].sort() });
      expect(principalsOf(own[0])).toHaveLength(1);
      expect(own[0].Condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': ENCRYPTION_CONTEXT.purpose } });
      expect(own[0].Resource).toBe('*'); // in a key policy: this key
    }
    // No other function's role appears.
    for (const id of s.stack.functions.all.keys()) {
      if (users.includes(id)) continue;
      expect(JSON.stringify(statements)).not.toContain(JSON.stringify(roleOf(s, id)));
    }
  });

  it('lets the CloudFormation role administer the key (CreateKey\'s lockout check and later updates need it), without using it', () => {
    const admin = statements.filter((st) => principalsOf(st).some((p) => JSON.stringify(p) === JSON.stringify(CFN_EXEC_ROLE)));
    expect(admin).toHaveLength(1);
    const actions = [admin[0].Action].flat();
    expect(actions).toEqual(expect.arrayContaining(['kms:Put*', 'kms:Describe*', 'kms:Get*', 'kms:Enable*', 'kms:ScheduleKeyDeletion', 'kms:TagResource']));
    expect(actions.filter((a) => CRYPTO.test(a))).toEqual([]);
    expect(principalsOf(admin[0])).toEqual([CFN_EXEC_ROLE]);
  });

  it('has no statement besides the administrators and the users', () => {
    expect(statements).toHaveLength(1 + Object.keys(SECRETS_KEY_ACCESS).length);
    for (const st of statements) expect(st.Effect).toBe('Allow');
  });
});

describe('secretsKeyAdmins', () => {
  const ADMIN = 'arn:aws:iam::123456789012:role/KeyAdmin';
  const s = synthesize({ secretsKeyAdmins: [ADMIN, 'arn:aws:iam::123456789012:user/ops'] });

  it('adds the operator\'s principals to the administrators, never to the users', () => {
    const statements = keyStatements(s);
    const admin = statements.find((st) => principalsOf(st).some((p) => JSON.stringify(p) === JSON.stringify(CFN_EXEC_ROLE)))!;
    expect(principalsOf(admin)).toEqual(expect.arrayContaining([CFN_EXEC_ROLE, ADMIN, 'arn:aws:iam::123456789012:user/ops']));
    for (const st of statements.filter((x) => x !== admin)) expect(JSON.stringify(principalsOf(st))).not.toContain('123456789012');
  });

  it('refuses the account root and anything that is not an IAM role or user ARN', () => {
    expect(() => synthesize({ secretsKeyAdmins: ['arn:aws:iam::123456789012:root'] })).toThrow(/secretsKeyAdmins/);
    expect(() => synthesize({ secretsKeyAdmins: ['*'] })).toThrow(/secretsKeyAdmins/);
  });
});
