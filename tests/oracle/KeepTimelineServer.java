/**
 * Runs Apache Hudi's timeline server (TimelineService.main with the given arguments) and
 * keeps the JVM alive until it is killed: Apache Hudi 1.x's main returns once the server
 * is started, and the JVM would exit when its last worker thread went idle.
 * Run in source-file mode: java -cp BUNDLE:JARS KeepTimelineServer.java ARGS.
 */
public class KeepTimelineServer {
  public static void main(String[] args) throws Exception {
    org.apache.hudi.timeline.service.TimelineService.main(args);
    Thread.currentThread().join();
  }
}
