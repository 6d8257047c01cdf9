// Known interpreted call chains for the interpreted-frames tests (test_interpreted.py), run with
// -Xint: three threads, each running one chain until the time is up, every hot loop on a line of
// its own (marked), so that the thread a sample comes from says which method and which line it
// was in and which callers lie under it.
//   java -Xint InterpChains SECONDS
//     thread "chain-a": chainA -> a1 -> a2 -> hotA    (hotA's loop: the line marked "hot-a")
//     thread "chain-b": chainB -> b1 -> hotB          (hotB's loop: "hot-b")
//     thread "chain-c": chainC -> hotC                (hotC's loop: "hot-c")
// Each caller calls its callee from one line (marked "call-..."). Prints "ready" once the
// threads run, "done" at the end.
public class InterpChains {
  static volatile boolean running = true;
  static long sinkA, sinkB, sinkC;

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

  public static void main(String[] args) throws Exception {
    final long seconds = Long.parseLong(args[0]);
    final Thread[] threads = {
        new Thread(InterpChains::chainA, "chain-a"),
        new Thread(InterpChains::chainB, "chain-b"),
        new Thread(InterpChains::chainC, "chain-c"),
    };
    for (Thread t : threads) t.start();
    System.out.println("ready");
    Thread.sleep(seconds * 1000);
    running = false;
    for (Thread t : threads) t.join();
    System.out.println("done " + (sinkA + sinkB + sinkC));
  }
}
