// The real Debezium connector as a judge: runs the embedded engine with the properties of a file
// and writes every record it emits, key and value as the JSON converter wrote them, one JSON
// object a line: {"destination": TOPIC, "key": KEY-OR-null, "value": VALUE-OR-null}.
// It stops the engine (cleanly, through close()) after the first record whose destination ends
// with the stop suffix (the workload's marker table), or when the engine stops by itself (an
// error: its message is written on stderr and the exit status is 3), or after the timeout
// (exit status 4). binlog_grammar/testing/debezium.py compiles and runs it.
//
// usage: java -cp DEBEZIUM_JARS:DIR DebeziumCapture PROPERTIES OUTPUT STOP_SUFFIX TIMEOUT_SECONDS

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;

import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

public class DebeziumCapture {

    private static String quoted(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    private static void write(Writer out, String line) {
        synchronized (out) {
            try {
                if (line == null) {
                    out.flush();
                } else {
                    out.write(line);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        try (FileInputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        Writer out = new OutputStreamWriter(new FileOutputStream(args[1]), StandardCharsets.UTF_8);
        String stopSuffix = args[2];
        long timeout = Long.parseLong(args[3]);
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<String> failure = new AtomicReference<>();

        DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
            .using(props)
            .using((success, message, error) -> {
                if (!success) {
                    // the chain of causes: the last one says what the connector stopped on
                    StringBuilder why = new StringBuilder(String.valueOf(message));
                    for (Throwable t = error; t != null; t = t.getCause()) {
                        why.append(" <- ").append(String.valueOf(t.getMessage()).replace('\n', ' '));
                    }
                    failure.set(why.toString());
                }
                done.countDown();
            })
            .notifying((List<ChangeEvent<String, String>> records,
                        DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer) -> {
                boolean last = false;
                for (ChangeEvent<String, String> r : records) {
                    write(out, "{\"destination\": " + quoted(r.destination())
                          + ", \"key\": " + (r.key() == null ? "null" : r.key())
                          + ", \"value\": " + (r.value() == null ? "null" : r.value())
                          + "}\n");
                    committer.markProcessed(r);
                    if (r.destination().endsWith(stopSuffix)) {
                        last = true;
                    }
                }
                committer.markBatchFinished();
                write(out, null);
                if (last) {
                    done.countDown();
                }
            })
            .build();

        ExecutorService executor = Executors.newSingleThreadExecutor();
        executor.execute(engine);
        boolean arrived = done.await(timeout, TimeUnit.SECONDS);
        try {
            engine.close();
        } catch (IllegalStateException e) {
            // already shut down: it stopped by itself (the completion callback said why)
        }
        executor.shutdown();
        executor.awaitTermination(60, TimeUnit.SECONDS);
        synchronized (out) {
            out.close();
        }
        if (failure.get() != null) {
            System.err.println("engine stopped: " + failure.get());
            System.exit(3);
        }
        if (!arrived) {
            System.err.println("timeout: no record for " + stopSuffix + " in " + timeout + " s");
            System.exit(4);
        }
        System.exit(0);
    }
}
