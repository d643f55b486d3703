package dev.mongoseq.testserver;

import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Starts mongo-java-server (in-memory backend, oplog on) on a loopback port for tests and the
 * demo, prints its connection string on one line once it accepts connections, and stops when it
 * gets SIGTERM/SIGINT or when its standard input closes (so a test runner that dies, however it
 * dies, takes the server with it).
 *
 * Usage: java -jar mongo-test-server.jar [--host 127.0.0.1] [--port 0] [--replica-set NAME]
 * Port 0 picks a free port. With a replica set name, hello answers as the primary of a
 * one-member set of that name (see PatchedBackend, patch 13); without, as a standalone.
 */
public final class EmbeddedMongo {

    /**
     * Current drivers (Rust mongodb 3.x, Node mongodb 7.x) refuse servers below MongoDB 4.4
     * (wire version 9); the library's own enum stops at wire 8. Declaring 4.4 is a recorded
     * deviation: the fake does not implement everything 4.4 has (see tests/FAKE-SERVER.md).
     */
    static final MongoVersion DECLARED_VERSION = new MongoVersion() {
        @Override
        public List<Integer> getVersionArray() {
            return List.of(4, 4, 0);
        }

        @Override
        public int getWireVersion() {
            return 9;
        }
    };

    public static void main(String[] args) throws Exception {
        String host = "127.0.0.1";
        int port = 0;
        String replicaSet = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--host" -> host = requireValue(args, ++i, "--host");
                case "--port" -> port = Integer.parseInt(requireValue(args, ++i, "--port"));
                case "--replica-set" -> replicaSet = requireValue(args, ++i, "--replica-set");
                case "-h", "--help" -> {
                    System.out.println("usage: mongo-test-server [--host 127.0.0.1] [--port 0] [--replica-set NAME]");
                    return;
                }
                default -> {
                    System.err.println("mongo-test-server: unknown argument " + args[i]);
                    System.exit(2);
                }
            }
        }

        PatchedBackend backend = new PatchedBackend(replicaSet);
        backend.version(DECLARED_VERSION);
        backend.enableOplog();
        PatchedServer server = new PatchedServer(backend);
        server.bind(host, port);
        InetSocketAddress address = server.address();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.shutdownNow();
            stopped.countDown();
        }, "mongo-test-server-shutdown"));

        Thread stdinWatcher = new Thread(() -> {
            drain(System.in);
            System.exit(0);
        }, "mongo-test-server-stdin");
        stdinWatcher.setDaemon(true);
        stdinWatcher.start();

        System.out.println("mongodb://" + address.getHostString() + ":" + address.getPort() + "/");
        System.out.flush();
        stopped.await();
    }

    private static String requireValue(String[] args, int index, String flag) {
        if (index >= args.length) {
            System.err.println("mongo-test-server: " + flag + " needs a value");
            System.exit(2);
        }
        return args[index];
    }

    /** Reads until end of input; returns when the parent closes our stdin or exits. */
    private static void drain(InputStream in) {
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // discard: stdin only signals the parent's lifetime
            }
        } catch (IOException ignored) {
            // a broken pipe means the parent is gone: stop too
        }
    }
}
