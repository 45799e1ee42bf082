// Certificates and keys for a test cluster, made on the fly with @peculiar/x509: a CA, the API
// server's serving certificate (127.0.0.1, localhost and the kubernetes service names), an admin
// client certificate in group system:masters, and the ServiceAccount token signing key pair.
import { webcrypto } from "node:crypto";
import { exportPrivateKey, randomSerial, x509 } from "../../src/security/ca/pki.ts";

const EC = { name: "ECDSA", namedCurve: "P-256" };
const SIGN = { name: "ECDSA", hash: "SHA-256" };
const DAY = 24 * 3600 * 1000;

export interface ClusterPki {
  caPem: string;
  servingCertPem: string;
  servingKeyPem: string;
  adminCertPem: string;
  adminKeyPem: string;
  serviceAccountPublicPem: string;
  serviceAccountPrivatePem: string;
}

const keyPair = async () =>
  (await webcrypto.subtle.generateKey(EC, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;

export async function makeClusterPki(): Promise<ClusterPki> {
  const notBefore = new Date(Date.now() - 3600 * 1000);
  const notAfter = new Date(Date.now() + 30 * DAY);
  const [caKeys, servingKeys, adminKeys, saKeys] = await Promise.all([keyPair(), keyPair(), keyPair(), keyPair()]);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: "CN=sluice-test-cluster-ca",
    keys: caKeys,
    notBefore,
    notAfter,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const leaf = async (
    subject: string,
    keys: webcrypto.CryptoKeyPair,
    usage: string,
    names: x509.JsonGeneralNames = [],
  ): Promise<string> => {
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([usage]),
      await x509.AuthorityKeyIdentifierExtension.create(ca),
    ];
    if (names.length) extensions.push(new x509.SubjectAlternativeNameExtension(names));
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject,
      issuer: ca.subject,
      notBefore,
      notAfter,
      signingKey: caKeys.privateKey,
      publicKey: keys.publicKey,
      signingAlgorithm: SIGN,
      extensions,
    });
    return `${cert.toString("pem")}\n`;
  };
  const servingCertPem = await leaf("CN=kube-apiserver", servingKeys, x509.ExtendedKeyUsage.serverAuth, [
    { type: "ip", value: "127.0.0.1" },
    { type: "ip", value: "10.0.0.1" },
    { type: "dns", value: "localhost" },
    { type: "dns", value: "kubernetes" },
    { type: "dns", value: "kubernetes.default" },
    { type: "dns", value: "kubernetes.default.svc" },
    { type: "dns", value: "kubernetes.default.svc.cluster.local" },
  ]);
  const adminCertPem = await leaf(
    "CN=sluice-test-admin, O=system:masters",
    adminKeys,
    x509.ExtendedKeyUsage.clientAuth,
  );
  const spki = await webcrypto.subtle.exportKey("spki", saKeys.publicKey);
  return {
    caPem: `${ca.toString("pem")}\n`,
    servingCertPem,
    servingKeyPem: await exportPrivateKey(servingKeys.privateKey),
    adminCertPem,
    adminKeyPem: await exportPrivateKey(adminKeys.privateKey),
    serviceAccountPublicPem: `${x509.PemConverter.encode(spki, "PUBLIC KEY")}\n`,
    serviceAccountPrivatePem: await exportPrivateKey(saKeys.privateKey),
  };
}
