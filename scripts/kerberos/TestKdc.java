// A Kerberos KDC for tests (scripts/kafka start --kerberos): Apache Kerby's SimpleKdcServer,
// which needs nothing but its Maven artifacts. Run as a single source file:
//
//   java -cp '<kerby jars>/*' TestKdc.java DIR REALM PORT PRINCIPAL... [--revoked PRINCIPAL]
//
// It serves REALM over TCP on 127.0.0.1:PORT (no UDP: krb5.conf sets udp_preference_limit = 1),
// keeps its database in DIR/kdc, creates each PRINCIPAL with a random key and exports it to
// DIR/<name>.keytab (the name with '/' and '@' replaced by '_'). A --revoked principal is exported
// too and then deleted: its keytab stands for an account the KDC no longer knows. DIR/ready is
// written last, once every keytab exists; the KDC then serves until the process is killed.

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;

import org.apache.kerby.kerberos.kerb.server.KdcConfigKey;
import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;

public final class TestKdc {
    private TestKdc() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: TestKdc DIR REALM PORT PRINCIPAL... [--revoked PRINCIPAL]");
            System.exit(2);
        }
        File dir = new File(args[0]);
        String realm = args[1];
        int port = Integer.parseInt(args[2]);
        List<String> principals = new ArrayList<>();
        List<String> revoked = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            if (args[i].equals("--revoked") && i + 1 < args.length) {
                revoked.add(args[++i]);
            } else {
                principals.add(args[i]);
            }
        }

        File work = new File(dir, "kdc");
        Files.createDirectories(work.toPath());
        SimpleKdcServer kdc = new SimpleKdcServer();
        kdc.setWorkDir(work);
        kdc.setKdcRealm(realm);
        kdc.setKdcHost("127.0.0.1");
        kdc.setAllowUdp(false);
        kdc.setAllowTcp(true);
        kdc.setKdcTcpPort(port);
        // AES only: Kerby would add des3-cbc-sha1, which current MIT and Java clients refuse.
        kdc.getKdcConfig().setString(KdcConfigKey.ENCRYPTION_TYPES,
            "aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96");
        kdc.init();
        kdc.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                kdc.stop();
            } catch (Exception e) {
                // The process is going away; nothing is left to clean up.
            }
        }));

        for (String principal : principals) {
            export(kdc, dir, principal);
        }
        for (String principal : revoked) {
            export(kdc, dir, principal);
            kdc.deletePrincipal(principal);
        }
        Files.writeString(new File(dir, "ready").toPath(), realm + "\n");
        System.out.println("KDC for " + realm + " on 127.0.0.1:" + port + " ready");
        Thread.currentThread().join();
    }

    private static void export(SimpleKdcServer kdc, File dir, String principal) throws Exception {
        kdc.createPrincipal(principal);
        File keytab = new File(dir, principal.replace('/', '_').replace('@', '_') + ".keytab");
        Files.deleteIfExists(keytab.toPath());
        kdc.exportPrincipal(principal, keytab);
    }
}
