// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
import java.io.IOException;
import java.io.InputStream;

/*
 * Deopt: make HotSpot throw compiled code away, twice over.
 *
 * 1. Deopt.work() calls Shape.area() while Square is the only subclass
 *    of Shape loaded, so the JIT compiles the call on that assumption
 *    (class hierarchy analysis). Loading Circle breaks it: the compiled
 *    work() is made not entrant, and work(), still hot, is compiled
 *    again at another address.
 * 2. Gone.spin() is compiled in a class of a class loader of its own;
 *    dropping the loader and collecting garbage unloads the class and
 *    with it the compiled spin(): the JVM reports that code unloaded.
 *
 * Prints "pid PID" first. Each phase ("phase NAME" as it starts: square,
 * circle, gone, unload)
 * runs until a line comes on the standard input: the test sends it once
 * the JVM has said that the phase's code was compiled, or unloaded. Then
 * it prints "done" and waits for its standard input to end, so that its
 * registry can be read. An early end of the input ends each phase.
 */
public class Deopt {
	static abstract class Shape {
		abstract int area();
	}

	static final class Square extends Shape {
		final int s;

		Square(int s) { this.s = s; }
		int area() { return s * s; }
	}

	static final class Circle extends Shape {
		final int r;

		Circle(int r) { this.r = r; }
		int area() { return 3 * r * r; }
	}

	static int work(Shape s, int n)
	{
		int sum = 0;

		for (int i = 0; i < n; i++)
			sum += s.area() + i;
		return sum;
	}

	/* Defines Gone itself rather than asking its parent. */
	static class Isolated extends ClassLoader {
		Isolated() { super(Deopt.class.getClassLoader()); }

		protected Class<?> loadClass(String name, boolean resolve)
			throws ClassNotFoundException
		{
			if (!name.equals("Gone"))
				return super.loadClass(name, resolve);
			try (InputStream in = getParent()
					.getResourceAsStream("Gone.class")) {
				byte[] b = in.readAllBytes();

				return defineClass(name, b, 0, b.length);
			} catch (Exception e) {
				throw new ClassNotFoundException(name, e);
			}
		}
	}

	static long sink;
	/* Lines read from the standard input, and whether it ended. */
	static volatile int told;
	static volatile boolean ended;

	/* Whether phase @n (1 for the first) is to go on. */
	static boolean untold(int n)
	{
		return told < n && !ended;
	}

	static void heat(Shape s, int phase)
	{
		do
			sink += work(s, 10000);
		while (untold(phase));
	}

	static void unloadGone() throws Exception
	{
		ClassLoader l = new Isolated();
		java.lang.reflect.Method spin =
			l.loadClass("Gone").getMethod("spin", int.class);

		do
			sink += (Integer)spin.invoke(null, 10000);
		while (untold(3));
		System.out.println("phase unload");
		spin = null;
		l = null;
		while (untold(4))
			System.gc();
	}

	public static void main(String[] args) throws Exception
	{
		Thread input = new Thread(() -> {
			try {
				int c;

				while ((c = System.in.read()) >= 0)
					if (c == '\n')
						told++;
			} catch (IOException e) {
			}
			ended = true;
		});

		input.setDaemon(true);
		input.start();
		System.out.println("pid " + ProcessHandle.current().pid());
		System.out.println("phase square");
		heat(new Square(3), 1);
		System.out.println("phase circle");
		sink += new Circle(2).area();
		heat(new Square(4), 2);
		System.out.println("phase gone");
		unloadGone();
		System.out.println("done " + sink);
		System.out.flush();
		input.join();
	}
}
