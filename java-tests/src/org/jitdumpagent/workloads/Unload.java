package org.jitdumpagent.workloads;

import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.WeakReference;
import java.util.function.IntUnaryOperator;

/**
 * Class unloading: Victim is defined by a throwaway class loader, run until compiled, then the
 * loader is dropped and System.gc() unloads the class and its compiled code.
 * Prints "unloaded=true" when the class is gone.
 */
public final class Unload {
  private Unload() {}

  static final String VICTIM = "org.jitdumpagent.workloads.victim.Victim";

  /** Defines Victim itself (from the parent's class file bytes) instead of delegating. */
  static final class Throwaway extends ClassLoader {
    Throwaway(ClassLoader parent) {
      super("throwaway", parent);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (!name.equals(VICTIM)) return super.loadClass(name, resolve);
      synchronized (getClassLoadingLock(name)) {
        Class<?> c = findLoadedClass(name);
        if (c != null) return c;
        try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
          byte[] bytes = in.readAllBytes();
          return defineClass(name, bytes, 0, bytes.length);
        } catch (IOException e) {
          throw new ClassNotFoundException(name, e);
        }
      }
    }
  }

  static WeakReference<Class<?>> runVictim() throws Exception {
    Throwaway loader = new Throwaway(Unload.class.getClassLoader());
    Class<?> c = loader.loadClass(VICTIM);
    if (c.getClassLoader() != loader) throw new IllegalStateException("Victim was not defined by the throwaway loader");
    IntUnaryOperator op = (IntUnaryOperator) c.getDeclaredConstructor().newInstance();
    long sink = 0;
    for (int i = 0; i < 100_000; i++) sink += op.applyAsInt(i);
    System.out.println("victim sink " + sink);
    Thread.sleep(300);  // let the compiles finish and their loads be posted
    return new WeakReference<>(c);
  }

  public static void main(String[] args) throws Exception {
    WeakReference<Class<?>> ref = runVictim();
    for (int i = 0; i < 10 && ref.get() != null; i++) {
      System.gc();
      Thread.sleep(50);
    }
    System.out.println("unloaded=" + (ref.get() == null));
    Thread.sleep(500);  // let the ServiceThread post the unload events
  }
}
