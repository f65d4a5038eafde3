package io.skiffmq.codec.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reports a leaked buffer while it ran. Registered for every test of the module
 * through JUnit's extension auto-detection ({@code META-INF/services}); other modules add it with
 * {@code @ExtendWith(LeakDetection.class)}. Surefire runs with {@code io.netty.leakDetection.level=paranoid},
 * so every buffer is tracked.
 *
 * <p>Netty only notices a leak when the leaked buffer has been garbage collected and the detector next tracks
 * a buffer; {@link #collectLeaks()} forces both. Thread-safe.
 */
public final class LeakDetection implements AfterAllCallback {
    private static final Queue<String> LEAKS = new ConcurrentLinkedQueue<>();

    static {
        if (System.getProperty("io.netty.leakDetection.level") == null) {
            // the build sets paranoid in argLine; this covers runs from an IDE
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        List<String> leaks = collectLeaks();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " leaked buffer(s) in " + context.getDisplayName() + ":\n"
                + String.join("\n", leaks));
        }
    }

    /** Collects garbage, lets the detector poll, and returns (and forgets) every leak reported so far. */
    public static List<String> collectLeaks() {
        for (int round = 0; round < 5; round++) {
            System.gc();
            for (int i = 0; i < 32; i++) {
                ByteBuf pooled = PooledByteBufAllocator.DEFAULT.buffer(1);
                pooled.release();
                ByteBuf unpooled = UnpooledByteBufAllocator.DEFAULT.directBuffer(1);
                unpooled.release();
            }
        }
        List<String> leaks = new ArrayList<>();
        for (String leak; (leak = LEAKS.poll()) != null; ) {
            leaks.add(leak);
        }
        return leaks;
    }

    private static final class RecordingFactory extends ResourceLeakDetectorFactory {
        @Override
        @SuppressWarnings("deprecation") // the abstract method every factory must implement
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                long maxActive) {
            return new ResourceLeakDetector<>(resource, samplingInterval) {
                @Override
                protected boolean needReport() {
                    return true;
                }

                @Override
                protected void reportTracedLeak(String resourceType, String records) {
                    LEAKS.add("LEAK: " + resourceType + records);
                }

                @Override
                protected void reportUntracedLeak(String resourceType) {
                    LEAKS.add("LEAK: " + resourceType + " (no records)");
                }
            };
        }
    }
}
