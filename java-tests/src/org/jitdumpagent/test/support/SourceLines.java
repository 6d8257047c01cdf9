package org.jitdumpagent.test.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Line numbers of workload source lines, found by marker comments ("// @line:name") in the
 * .java file itself, so expectations come from the source and never from the agent's output.
 */
public final class SourceLines {
  private SourceLines() {}

  /** The workload source for a class in org.jitdumpagent.workloads (top-level name). */
  public static Path workloadSource(String simpleName) {
    return Env.sources().resolve("org/jitdumpagent/workloads/" + simpleName + ".java");
  }

  /** 1-based line of the unique line carrying "@line:" + marker. */
  public static int line(String simpleName, String marker) {
    Path file = workloadSource(simpleName);
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String tag = "@line:" + marker;
    int found = -1;
    for (int i = 0; i < lines.size(); i++) {
      String l = lines.get(i);
      int at = l.indexOf(tag);
      if (at >= 0 && (at + tag.length() == l.length() || !Character.isJavaIdentifierPart(l.charAt(at + tag.length())))) {
        if (found >= 0) throw new IllegalStateException(file + ": marker " + tag + " appears twice");
        found = i + 1;
      }
    }
    if (found < 0) throw new IllegalStateException(file + ": no marker " + tag);
    return found;
  }
}
