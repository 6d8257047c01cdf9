// Known interpreted call chains for the interpreted-frames tests (test_interpreted.py), run with
// -Xint, in two phases. First three threads, each running one chain for SECONDS, every hot loop on
// a line of its own (marked), so that the thread a sample comes from says which method and which
// line it was in and which callers lie under it. Then, alone for VM_SECONDS, a fourth thread that
// the VM calls into.
//   java -Xint InterpChains SECONDS VM_SECONDS
//     thread "chain-a": chainA -> a1 -> a2 -> hotA    (hotA's loop: the line marked "hot-a")
//     thread "chain-b": chainB -> b1 -> hotB          (hotB's loop: "hot-b")
//     thread "chain-c": chainC -> hotC                (hotC's loop: "hot-c")
//     thread "via-vm":  viaVm -> (Method.invoke, the VM) -> entered
// Each caller calls its callee from one line (marked "call-..."). Thread "via-vm" has the VM
// call Java: run with -Dsun.reflect.inflationThreshold=2147483647 (JDK 17) and
// -Djdk.reflect.useNativeAccessorOnly=true (JDK 18 and later), every reflective call goes
// through the native accessor and HotSpot's call stub into entered's interpreter entry, which
// lays out its many locals before its frame exists, and returns through the call stub.
// It runs after the chains, not beside them: a fourth busy thread on a 2-core machine keeps the
// chains off a CPU for long enough that JFR's sampler, which gives up on a thread that does not
// stop within 2 ms, sometimes samples one chain only a half or a quarter as often as the others.
// Prints "done" at the end.
import java.lang.reflect.Method;

public class InterpChains {
  static volatile boolean running = true;
  static long sinkA, sinkB, sinkC, sinkVm;

  static void hotA(int n) {
    for (int i = 0; i < n; i++) sinkA += i * 3 + (i >>> 2);  // hot-a
  }

  static void a2(int n) {
    hotA(n);  // call-a2
  }

  static void a1(int n) {
    a2(n);  // call-a1
  }

  static void chainA() {
    while (running) {
      a1(2000);  // call-chainA
    }
  }

  static void hotB(int n) {
    for (int i = 0; i < n; i++) sinkB ^= (sinkB << 1) + i;  // hot-b
  }

  static void b1(int n) {
    hotB(n);  // call-b1
  }

  static void chainB() {
    while (running) {
      b1(2000);  // call-chainB
    }
  }

  static void hotC(int n) {
    for (int i = 0; i < n; i++) sinkC += i % 5;  // hot-c
  }

  static void chainC() {
    while (running) {
      hotC(2000);  // call-chainC
    }
  }

  // Many locals: the entry pushes one word for each before it builds the frame.
  public static long entered(int n) {
    long a0 = n, a1 = a0 + 1, a2 = a1 + 1, a3 = a2 + 1, a4 = a3 + 1, a5 = a4 + 1, a6 = a5 + 1, a7 = a6 + 1;
    long b0 = a7, b1 = b0 + 1, b2 = b1 + 1, b3 = b2 + 1, b4 = b3 + 1, b5 = b4 + 1, b6 = b5 + 1, b7 = b6 + 1;
    long c0 = b7, c1 = c0 + 1, c2 = c1 + 1, c3 = c2 + 1, c4 = c3 + 1, c5 = c4 + 1, c6 = c5 + 1, c7 = c6 + 1;
    long d0 = c7, d1 = d0 + 1, d2 = d1 + 1, d3 = d2 + 1, d4 = d3 + 1, d5 = d4 + 1, d6 = d5 + 1, d7 = d6 + 1;
    return a0 + b1 + c2 + d7;
  }

  static void viaVm() {
    try {
      final Method entered = InterpChains.class.getMethod("entered", int.class);
      while (running) {
        sinkVm += (Long) entered.invoke(null, 3);  // call-viaVm
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  public static void main(String[] args) throws Exception {
    final long seconds = Long.parseLong(args[0]);
    final long vmSeconds = Long.parseLong(args[1]);
    final Thread[] chains = {
        new Thread(InterpChains::chainA, "chain-a"),
        new Thread(InterpChains::chainB, "chain-b"),
        new Thread(InterpChains::chainC, "chain-c"),
    };
    runFor(seconds, chains);
    runFor(vmSeconds, new Thread(InterpChains::viaVm, "via-vm"));
    System.out.println("done " + (sinkA + sinkB + sinkC + sinkVm));
  }

  static void runFor(long seconds, Thread... threads) throws InterruptedException {
    running = true;
    for (Thread t : threads) t.start();
    Thread.sleep(seconds * 1000);
    running = false;
    for (Thread t : threads) t.join();
  }
}
