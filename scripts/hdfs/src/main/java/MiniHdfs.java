import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * One NameNode and one DataNode of Hadoop's MiniDFSCluster on 127.0.0.1, for the snapshot-store
 * tests. Usage: MiniHdfs DATA_DIR PORT_FILE. Writes the NameNode's port to PORT_FILE once HDFS
 * serves requests, then runs until it is killed. Permissions are off: every client may write.
 */
public final class MiniHdfs {
  private MiniHdfs() {}

  public static void main(String[] args) throws Exception {
    File data = new File(args[0]);
    Path portFile = Path.of(args[1]);
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, data.getAbsolutePath());
    conf.set("dfs.permissions.enabled", "false");
    conf.set("dfs.namenode.rpc-bind-host", "127.0.0.1");
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.set("dfs.namenode.http-address", "127.0.0.1:0");
    // Clients reach the DataNode by the address it registered with, 127.0.0.1.
    conf.set("dfs.client.use.datanode.hostname", "false");
    MiniDFSCluster cluster =
        new MiniDFSCluster.Builder(conf).numDataNodes(1).format(true).build();
    cluster.waitActive();
    Runtime.getRuntime().addShutdownHook(new Thread(cluster::shutdown));
    Path partial = portFile.resolveSibling(portFile.getFileName() + ".tmp");
    Files.writeString(partial, Integer.toString(cluster.getNameNodePort()));
    Files.move(partial, portFile);
    Thread.currentThread().join();
  }
}
