import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

function openssl(args: string[], cwd: string) {
  execFileSync("openssl", args, { cwd, stdio: "pipe" });
}

/**
 * A throwaway CA with a server certificate for localhost (laid out as the function SDK reads
 * it: tls.key, tls.crt, ca.crt) and a client certificate, as Crossplane presents one.
 */
export function makeTestPKI(tempDir: (prefix: string) => string): { dir: string; serverDir: string; clientDir: string } {
  const dir = tempDir("berth-pki-");
  openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=berth-test-ca", "-keyout", "ca.key", "-out", "ca.crt"], dir);
  const issue = (name: string, ext: string) => {
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", `/CN=${name}`, "-keyout", `${name}.key`, "-out", `${name}.csr`], dir);
    openssl(["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1", "-extfile", `${name}.ext`, "-out", `${name}.crt`], dir);
  };
  issue("server", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  issue("client", "extendedKeyUsage=clientAuth\n");
  // The SDK reads <dir>/tls.key, tls.crt and ca.crt.
  const serverDir = join(dir, "server-tls");
  const clientDir = join(dir, "client-tls");
  execFileSync("mkdir", ["-p", serverDir, clientDir]);
  execFileSync("cp", [join(dir, "server.key"), join(serverDir, "tls.key")]);
  execFileSync("cp", [join(dir, "server.crt"), join(serverDir, "tls.crt")]);
  execFileSync("cp", [join(dir, "ca.crt"), join(serverDir, "ca.crt")]);
  execFileSync("cp", [join(dir, "client.key"), join(clientDir, "tls.key")]);
  execFileSync("cp", [join(dir, "client.crt"), join(clientDir, "tls.crt")]);
  execFileSync("cp", [join(dir, "ca.crt"), join(clientDir, "ca.crt")]);
  return { dir, serverDir, clientDir };
}
