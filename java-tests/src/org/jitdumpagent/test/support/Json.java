package org.jitdumpagent.test.support;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A tiny JSON reader: objects become LinkedHashMap, arrays List, numbers Long or Double. */
public final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  public static Object parse(String text) {
    Json j = new Json(text);
    Object v = j.value();
    j.ws();
    if (j.i != j.s.length()) throw j.error("trailing characters");
    return v;
  }

  /** Follows a dotted path such as "events.compiled_method_load" to a number. */
  @SuppressWarnings("unchecked")
  public static long number(Object root, String path) {
    Object v = root;
    for (String part : path.split("\\.")) {
      if (!(v instanceof Map) || !((Map<String, Object>) v).containsKey(part)) {
        throw new AssertionError("stats JSON has no '" + path + "'");
      }
      v = ((Map<String, Object>) v).get(part);
    }
    if (!(v instanceof Long)) throw new AssertionError("stats '" + path + "' is not an integer: " + v);
    return (Long) v;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("JSON: " + what + " at offset " + i);
  }

  private void ws() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
  }

  private Object value() {
    ws();
    if (i >= s.length()) throw error("unexpected end");
    char c = s.charAt(i);
    switch (c) {
      case '{': return object();
      case '[': return array();
      case '"': return string();
      case 't': return literal("true", Boolean.TRUE);
      case 'f': return literal("false", Boolean.FALSE);
      case 'n': return literal("null", null);
      default: return number();
    }
  }

  private Object literal(String word, Object v) {
    if (!s.startsWith(word, i)) throw error("bad literal");
    i += word.length();
    return v;
  }

  private Map<String, Object> object() {
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    ws();
    if (peek('}')) return m;
    for (;;) {
      ws();
      if (i >= s.length() || s.charAt(i) != '"') throw error("expected key");
      String k = string();
      ws();
      expect(':');
      m.put(k, value());
      ws();
      if (peek('}')) return m;
      expect(',');
    }
  }

  private List<Object> array() {
    List<Object> l = new ArrayList<>();
    i++;
    ws();
    if (peek(']')) return l;
    for (;;) {
      l.add(value());
      ws();
      if (peek(']')) return l;
      expect(',');
    }
  }

  private boolean peek(char c) {
    if (i < s.length() && s.charAt(i) == c) {
      i++;
      return true;
    }
    return false;
  }

  private void expect(char c) {
    if (!peek(c)) throw error("expected '" + c + "'");
  }

  private String string() {
    StringBuilder sb = new StringBuilder();
    i++;
    while (i < s.length()) {
      char c = s.charAt(i++);
      if (c == '"') return sb.toString();
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      char e = s.charAt(i++);
      switch (e) {
        case 'n': sb.append('\n'); break;
        case 't': sb.append('\t'); break;
        case 'r': sb.append('\r'); break;
        case 'b': sb.append('\b'); break;
        case 'f': sb.append('\f'); break;
        case 'u': sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
        default: sb.append(e); break;
      }
    }
    throw error("unterminated string");
  }

  private Object number() {
    int start = i;
    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
    String t = s.substring(start, i);
    if (t.isEmpty()) throw error("unexpected character");
    if (t.contains(".") || t.contains("e") || t.contains("E")) return Double.parseDouble(t);
    return Long.parseLong(t);
  }
}
