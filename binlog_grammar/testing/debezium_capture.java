// The real Debezium connector as a judge: runs embedded engines, each with the properties of a
// file, and writes every record each emits, key and value as the JSON converter wrote them, one
// JSON object a line, into that engine's output file:
// {"destination": TOPIC, "key": KEY-OR-null, "value": VALUE-OR-null}.
// Several engines (one per option set) run at once in this one JVM, so a workload is captured
// under every option set for one start of the JVM (its start and class loading are the slow
// part). Each engine stops (cleanly, through close()) after the first record whose destination
// ends with the stop suffix (the workload's marker table); the program ends when every engine
// reached its marker or stopped by itself (an error: each failed engine's message is written on
// stderr, "engine stopped: [INDEX] ...", and the exit status is 3), or after the timeout (exit
// status 4). binlog_grammar/testing/debezium.py
// compiles and runs it.
//
// usage: java -cp DEBEZIUM_JARS:DIR DebeziumCapture PROPERTIES OUTPUT [PROPERTIES OUTPUT ...]
//            STOP_SUFFIX TIMEOUT_SECONDS

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
import java.util.ArrayList;
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

    private static final class Run {
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicReference<String> failure = new AtomicReference<>();
        Writer out;
        DebeziumEngine<ChangeEvent<String, String>> engine;
    }

    private static Run start(String properties, String output, String stopSuffix,
                             ExecutorService executor) throws IOException {
        Properties props = new Properties();
        try (FileInputStream in = new FileInputStream(properties)) {
            props.load(in);
        }
        Run run = new Run();
        Writer out = new OutputStreamWriter(new FileOutputStream(output), StandardCharsets.UTF_8);
        run.out = out;
        run.engine = DebeziumEngine.create(Json.class)
            .using(props)
            .using((success, message, error) -> {
                if (!success) {
                    // the chain of causes: the last one says what the connector stopped on
                    StringBuilder why = new StringBuilder(String.valueOf(message));
                    for (Throwable t = error; t != null; t = t.getCause()) {
                        why.append(" <- ").append(String.valueOf(t.getMessage()).replace('\n', ' '));
                    }
                    run.failure.set(why.toString());
                    System.err.println("engine failed: " + why);  // seen by the caller at once
                }
                run.done.countDown();
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
                    run.done.countDown();
                }
            })
            .build();
        executor.execute(run.engine);
        return run;
    }

    public static void main(String[] args) throws Exception {
        int n = (args.length - 2) / 2;
        String stopSuffix = args[args.length - 2];
        long timeout = Long.parseLong(args[args.length - 1]);
        ExecutorService executor = Executors.newFixedThreadPool(n);
        List<Run> runs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            runs.add(start(args[2 * i], args[2 * i + 1], stopSuffix, executor));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeout);
        boolean arrived = false;
        while (!arrived && System.nanoTime() < deadline) {
            arrived = true;
            for (Run run : runs) {
                arrived &= run.done.getCount() == 0;  // at its marker, or stopped by itself
            }
            if (!arrived) {
                Thread.sleep(20);
            }
        }
        for (Run run : runs) {
            try {
                run.engine.close();
            } catch (IllegalStateException e) {
                // already shut down: it stopped by itself (the completion callback said why)
            }
        }
        executor.shutdown();
        executor.awaitTermination(60, TimeUnit.SECONDS);
        boolean failed = false;
        for (int i = 0; i < n; i++) {
            Run run = runs.get(i);
            synchronized (run.out) {
                run.out.close();
            }
            if (run.failure.get() != null) {
                System.err.println("engine stopped: [" + i + "] " + run.failure.get());
                failed = true;
            }
        }
        if (failed) {
            System.exit(3);
        }
        if (!arrived) {
            System.err.println("timeout: no record for " + stopSuffix + " in " + timeout + " s");
            System.exit(4);
        }
        System.exit(0);
    }
}
